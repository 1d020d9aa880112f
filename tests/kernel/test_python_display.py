"""Figures in Python cells: plt.show() draws into the output, with writable matplotlib folders.

The sandbox's home is read-only; matplotlib warned in red on import and plt.show() (Agg) drew
nothing. Real cells on the test session's Ray head (tests/conftest.py).
"""
from __future__ import annotations

import pytest

from console.kernel.session import Session


@pytest.mark.slow
def test_plt_show_draws_an_image_and_warns_nothing(ray_session: Session) -> None:
    code = ("--%python\nimport os\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\n"
            "plt.show()\nprint('config', os.environ['MPLCONFIGDIR'])\n")
    out = ray_session.run_cell(code, kind="python", cell=1)
    assert out.ok, out.error
    events = [e for e in ray_session.events if e.type == "output"]
    images = [e for e in events if e.stream == "image"]
    assert len(images) == 1 and images[0].text.startswith("iVBORw0KGgo")  # base64 of a PNG
    printed = "".join(e.text for e in events if e.stream == "stdout")
    # The session's cache folder (printed paths of it read `cache:…`, console/sources/paths.py scrub).
    assert "config cache:.home/matplotlib" in printed or f"config {ray_session.cache_dir}/.home/matplotlib" in printed
    errors = "".join(e.text for e in events if e.stream == "stderr")
    assert "non-interactive" not in errors and "not writable" not in errors, errors
