"""How long is the schema text a model reads in prompt mode (``json_object`` without a schema,
or ``--response-format prompt``), per call kind? (issue 27 item 7; decision 360)

Prints characters and tokens (characters / 4: no tokenizer of the served model here) of the
text appended to the last user turn, for each call kind in a typical C session (five ledger
nodes, two requirements, one source; the judge-after after 3 framings and 4 dependencies)
and for the model rater on the pilot-02 scheme. Sizes, not times: one figure per kind.

Run ``python benchmarks/bench_schema_text.py``; to compare with another tree, run it with
``PYTHONPATH`` pointing at that tree's package (decision 360 has both columns).
"""

from __future__ import annotations

from typing import Any


def _texts() -> dict[str, str]:
    try:  # a tree from before the rooms (the "before" column of decision 360)
        from curiosity_tui.protocol.client import schema_instruction  # type: ignore[import-not-found]
    except ImportError:
        from curiosity_tui.modelio.json_reply import schema_instruction
    from curiosity_tui.packs.model_rater import reply_model
    from curiosity_tui.packs.schemes import load_scheme
    from curiosity_tui.protocol import call_specs as sp
    from curiosity_tui.protocol.schemas import JudgeBeforeResponse

    nodes = ["q1", "q2", "q3", "q4", "q5"]
    reqs = ["q1.f1", "q1.f2"]
    src = ["a" * 64]
    before = JudgeBeforeResponse(framings=["a", "b", "c"], dependencies=["d", "e", "f", "g"])
    deliv: dict[str, Any] = dict(
        node_ids=nodes,
        focus_id="q1",
        requirement_ids=reqs,
        open_layer_min=1,
        downgrades_allowed=True,
        preserve=False,
        source_ids=src,
    )
    specs = {
        "self-ask (B)": sp.self_ask_spec(),
        "self-ask (B-armed)": sp.armed_self_ask_spec(nodes, src),
        "judge-before": sp.judge_before_spec(),
        "judge-after": sp.judge_after_spec(before),
        "checker": sp.checker_spec("q1.f1", src),
        "deliverable (pilot-01)": sp.deliverable_spec(**deliv, checks_in_deliverable=True),
        "deliverable (pilot-02)": sp.deliverable_spec(**deliv, checks_in_deliverable=False),
        "curator": sp.curator_spec(nodes),
    }
    out = {k: schema_instruction(s.model, s.json_schema("strict")) for k, s in specs.items()}
    scheme = load_scheme("pilot-02")
    out["rate (pilot-02 scheme)"] = schema_instruction(reply_model(scheme))
    return out


def main() -> None:
    texts = _texts()
    print(f"{'call kind':<26}{'chars':>8}{'tokens~':>9}")
    for kind, text in texts.items():
        print(f"{kind:<26}{len(text):>8}{len(text) // 4:>9}")


if __name__ == "__main__":
    main()
