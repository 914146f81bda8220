"""The policy network's weights for the page's offline play: ``policy-weights.pt`` written as JSON
the browser reads (``static/offline/policy-weights.json``), each tensor as base64 of little-endian
float32 with its shape, and the SHA-256 of the ``.pt`` it came from, so a test can tell a stale
export from a fresh one. The file is committed (about 0.7 MB); write it again after retraining:

    python -m pasur.web.offline_export [WEIGHTS.pt] [OUT.json]

The forward pass that reads it is ``static/offline/agents.js``.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np

#: where the page fetches the exported weights (served as a static file, cached by the service worker)
EXPORT = Path(__file__).with_name("static") / "offline" / "policy-weights.json"


def export_json(weights: Path | None = None) -> str:
    """The JSON text of the network in ``weights`` (default: the shipped one), checked by its card."""
    from pasur.hidden.policy import DEFAULT_WEIGHTS, PolicyModel
    from pasur.hidden.weights import sha256

    path = Path(weights) if weights is not None else DEFAULT_WEIGHTS
    net = PolicyModel.load(path).net
    tensors = {}
    for name, t in net.state_dict().items():
        data = t.detach().cpu().numpy().astype("<f4")
        raw = np.ascontiguousarray(data).tobytes()
        tensors[name] = {"shape": list(data.shape), "data": base64.b64encode(raw).decode()}
    doc = {
        "kind": "pasur policy-value network, float32 little-endian, base64",
        "source": path.name,
        "sha256": sha256(path),
        "hidden": net.hidden,
        "action_hidden": net.action_hidden,
        "tensors": tensors,
    }
    return json.dumps(doc, indent=0, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print("error: usage: python -m pasur.web.offline_export [WEIGHTS.pt] [OUT.json]", file=sys.stderr)
        return 2
    from pasur.common.errors import PasurInputError

    out = Path(argv[1]) if len(argv) > 1 else EXPORT
    try:
        text = export_json(Path(argv[0]) if argv else None)
    except PasurInputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
