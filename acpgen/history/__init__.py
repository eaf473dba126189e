"""Release history for the reference pages: in which release each element appeared,
became stable, or changed in a way that breaks a peer (issue #26).

The releases are loaded and normalised as ``build`` does (the pipeline hands in its
:func:`acpgen.api.load_release`), and compared with the machinery of ``acpgen diff``
(used read-only: :func:`acpgen.diff.diff_releases`): each release once, each consecutive
pair once.
The same records make the changes pages (:mod:`acpgen.history.changes`) and the marks
(:mod:`acpgen.history.marks`), so a mark always links to a section that exists.
"""
