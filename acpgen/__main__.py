from acpgen.stamp import main

main()
