"""pytest set-up for the in-container supervisor's own tests.

The supervisor's modules import each other by bare name (they run from
/opt/toolcell/supervisor in the image), so the tests put that folder on the
path the same way. test/backends/docker/supervisor-python.test.ts runs these tests
as part of `npm test`.
"""

import json
import os
import sys

import pytest

# No __pycache__ beside the supervisor's sources: sandbox/ is the image's
# recipe, and its hash names the image.
sys.dont_write_bytecode = True

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "sandbox", "supervisor"))


@pytest.fixture(scope="session")
def golden():
    with open(os.path.join(ROOT, "test", "fixtures", "supervisor-frames.json"), encoding="utf-8") as f:
        return json.load(f)
