"""Issue 27 item 7 on llama-server with SmolLM2-135M-Instruct: ``rate --model`` rates a pack
through the human scheme. The reply's schema carries the scheme (category enums, quote slots
per question), so no item is lost to a count the grammar could not say; what stays missing is
named, and the exit status says whether any did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from real_cli import RealServers, run_cli
from real_proxy import RecordingProxy

from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.schemes import load_scheme


@pytest.mark.realserver
@pytest.mark.realserver_ci
@pytest.mark.timeout(2400)
def test_the_model_rater_rates_a_pack(
    servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
    pack = run_dir / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-02"), pack, seed=11)
    rater = f"model:{servers.model}"
    rated = run_cli(
        "rate", str(pack), "--rater", rater, "--model", servers.model,
        "--base-url", proxy.base_url, "--timeout", "1800", cwd=run_dir,
    )  # fmt: skip
    lines = (pack / "ratings" / f"{rater}.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    order = Pack.open(pack).order
    assert sorted({r["item"] for r in records}) == sorted(order), rated.explain()
    missing = [r for r in records if r.get("missing")]
    reasons = " ".join(str(r["missing"]) for r in missing)
    assert "quotes given, at most" not in reasons, reasons  # the count is said by the shape
    if missing:
        assert rated.returncode == 1, rated.explain()
        assert rated.stderr.startswith("rate: "), rated.explain()
    else:
        assert rated.returncode == 0, rated.explain()
    results = run_dir.parent.parent / "results.jsonl"
    entry = {"test": run_dir.name, "items": len(order), "missing": len(missing), "reasons": reasons}
    with results.open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
