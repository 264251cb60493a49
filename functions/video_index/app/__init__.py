"""The composition root: which routers each function serves (:mod:`.routes`) and how each
capability's services are built (:mod:`.services`). The only package that imports every
capability; nothing imports it but the handlers, ``video-index local``, the command line
and the tests."""
