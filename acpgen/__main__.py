from acpgen.entry import main

main()
