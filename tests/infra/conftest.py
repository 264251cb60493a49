"""Infrastructure tests read the one synthesis of the session ``synth`` fixture
(tests/conftest.py): the ops CLI's tests read the same template."""
