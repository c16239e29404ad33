"""Leak check (key holder only): can surface features of the items predict the configuration?

Two kinds of features. *Format counts* — lengths, line and list counts, character classes,
whether a section is empty: a scikit-learn classifier (standardised ridge classifier) is
cross-validated (stratified k-fold) per task, and its accuracy is reported against chance
(the majority-class share) with a permutation p-value. Tasks follow the configuration
families the report distinguishes (§3): A vs B vs the store-bearing arms (the recorded
residual leak), C vs B-armed within the store-bearing arms (the comparison the pack was
built for), curator vs none within them, all six, and — when the pack has control items —
control vs real. *Wording* (:mod:`curiosity_tui.packs.lexical`): TF-IDF word and character
n-grams with a cross-validated linear classifier, for every pair of configurations and
for controls vs items.

A task is ``residual`` when it separates the configuration families (A, B, store-bearing):
the report records that leak (an arm without a store has no input section), so it is
reported but does not make ``pack build --strict`` refuse; every other task does when it
leaks at p < 0.05.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from curiosity_tui.blas import single_threaded
from curiosity_tui.bounds import check_permutations, check_seed
from curiosity_tui.packs.lexical import LEXICAL_FEATURES, lexical_matrix, lexical_test
from curiosity_tui.packs.pack import Pack, PackKey
from curiosity_tui.packs.unblind import read_key

__all__ = ["FEATURES", "LeakReport", "LeakTask", "item_features", "leakcheck"]

ALPHA = 0.05

_LIST_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")

SECTION_FEATURES = (
    "chars",
    "words",
    "lines",
    "nonempty_lines",
    "list_lines",
    "indented_lines",
    "digits",
    "upper",
    "punct",
    "questions",
    "colons",
    "brackets",
    "empty",
    "mean_line_len",
)
FEATURES = tuple(f"s{i}_{name}" for i in (1, 2, 3) for name in SECTION_FEATURES) + (
    "s3_over_s1_chars",
)


def _section_features(text: str) -> list[float]:
    lines = text.split("\n") if text else []
    nonempty = [ln for ln in lines if ln.strip()]
    chars = len(text)
    return [
        float(chars),
        float(len(text.split())),
        float(len(lines)),
        float(len(nonempty)),
        float(sum(1 for ln in lines if _LIST_RE.match(ln))),
        float(sum(1 for ln in nonempty if ln[:1].isspace())),
        float(sum(c.isdigit() for c in text)),
        float(sum(c.isupper() for c in text)),
        float(sum(c in ".,;!\"'-" for c in text)),
        float(text.count("?")),
        float(text.count(":")),
        float(sum(c in "()[]{}<>" for c in text)),
        1.0 if not text.strip() else 0.0,
        float(np.mean([len(ln) for ln in nonempty])) if nonempty else 0.0,
    ]


def item_features(sections: Sequence[str]) -> list[float]:
    feats: list[float] = []
    for s in sections:
        feats.extend(_section_features(s))
    feats.append(len(sections[2]) / max(1, len(sections[0])))
    return feats


class LeakTask(BaseModel):
    task: str
    description: str
    n_items: int
    classes: dict[str, int]
    folds: int | None
    accuracy: float | None
    chance: float | None
    p_value: float | None
    top_features: list[str]
    verdict: str
    #: "format" (count features) or "lexical" (TF-IDF n-grams)
    features: str = "format"
    #: separates the configuration families: the report's recorded leak, not refused
    residual: bool = False

    @property
    def leaks(self) -> bool:
        return self.verdict.startswith("LEAK")


class LeakReport(BaseModel):
    pack_id: str
    features: list[str]
    classifier: str
    lexical: str = LEXICAL_FEATURES
    tasks: list[LeakTask]

    def refusing(self) -> list[LeakTask]:
        """The tasks that make ``pack build --strict`` refuse: leaks that are not residual."""
        return [t for t in self.tasks if t.leaks and not t.residual]


def _family(config: str) -> str:
    if config == "A":
        return "A (single answer)"
    if config == "B":
        return "B (bare self-ask)"
    return "store-bearing"


def _ridge_predict(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray) -> np.ndarray:
    """What ``StandardScaler`` + ``RidgeClassifier(alpha=1)`` predicts, in plain numpy: the
    same model (±1 targets per class, intercept by centring), without sklearn's per-call
    validation, which dominated the cost of the permutation loop."""
    mu, sd = x_tr.mean(axis=0), x_tr.std(axis=0)
    sd[sd == 0] = 1.0
    a, b = (x_tr - mu) / sd, (x_te - mu) / sd
    classes = np.unique(y_tr)
    t = np.where(y_tr[:, None] == classes[None, :], 1.0, -1.0)
    t_mean = t.mean(axis=0)
    w = np.linalg.solve(a.T @ a + np.eye(a.shape[1]), a.T @ (t - t_mean))
    scores = b @ w + t_mean
    if len(classes) == 2:  # sklearn's binary decision: one column, sign
        return np.asarray(classes[(scores[:, 1] > 0).astype(int)])
    return np.asarray(classes[np.argmax(scores, axis=1)])


@single_threaded  # ridge fits × permutations: one BLAS thread (issue 14.4)
def _run_task(
    name: str,
    description: str,
    x: np.ndarray,
    labels: list[str],
    *,
    seed: int,
    permutations: int,
    alpha: float = 0.05,
) -> LeakTask:
    counts = Counter(labels)
    n = len(labels)
    base = LeakTask(
        task=name,
        description=description,
        n_items=n,
        classes=dict(sorted(counts.items())),
        folds=None,
        accuracy=None,
        chance=None,
        p_value=None,
        top_features=[],
        verdict="",
    )
    if len(counts) < 2:
        return base.model_copy(
            update={"verdict": "not testable: fewer than two classes in the pack"}
        )
    folds = min(5, min(counts.values()))
    if folds < 2:
        return base.model_copy(
            update={"verdict": "not testable: some class has a single item (need ≥ 2 per class)"}
        )
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    y = np.array(labels)
    splits = list(StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(x, y))

    def cv_accuracy(yy: np.ndarray) -> float:
        hits = 0
        for tr, te in splits:
            hits += int((_ridge_predict(x[tr], yy[tr], x[te]) == yy[te]).sum())
        return hits / len(yy)

    score = cv_accuracy(y)
    rng = np.random.default_rng(seed)
    perm_scores = [cv_accuracy(rng.permutation(y)) for _ in range(permutations)]
    pvalue = (1 + sum(ps >= score for ps in perm_scores)) / (permutations + 1)
    chance = max(counts.values()) / n
    scaler = StandardScaler().fit(x)
    full = RidgeClassifier(alpha=1.0).fit(scaler.transform(x), y)
    coef = np.abs(np.atleast_2d(full.coef_)).max(axis=0)
    top = [FEATURES[i] for i in np.argsort(-coef)[:3]]
    if pvalue < alpha and score > chance:
        verdict = (
            f"LEAK: the format predicts this split ({score:.2f} accuracy against "
            f"{chance:.2f} chance, p = {pvalue:.3f})"
        )
    else:
        verdict = (
            f"no evidence of a leak at this size ({score:.2f} against {chance:.2f} chance, "
            f"p = {pvalue:.3f}); a small pack cannot show the absence of one"
        )
    return base.model_copy(
        update={
            "folds": folds,
            "accuracy": float(score),
            "chance": float(chance),
            "p_value": float(pvalue),
            "top_features": top,
            "verdict": verdict,
        }
    )


def leakcheck(
    packdir: str | Path,
    *,
    key_path: Path | None = None,
    seed: int = 0,
    permutations: int = 199,
) -> LeakReport:
    """Every task, count and lexical, with BLAS limited to one thread: the matrices are
    tiny, and threads only contend with each other (and other processes) on small machines."""
    from threadpoolctl import threadpool_limits

    check_permutations(permutations, flag="--permutations", alpha=ALPHA)  # decision 405
    check_seed(seed)
    with threadpool_limits(limits=1):
        return _leakcheck(packdir, key_path=key_path, seed=seed, permutations=permutations)


def _leakcheck(
    packdir: str | Path, *, key_path: Path | None, seed: int, permutations: int
) -> LeakReport:
    pack = Pack.open(packdir)
    key: PackKey = read_key(pack, key_path)
    order = pack.order
    x_all = np.array([item_features(pack.items[i].sections) for i in order])
    real = [k for k, i in enumerate(order) if key.items[i].kind == "run"]
    cfg = [key.items[i].config for i in order]

    def subset(pred: Callable[[int], bool]) -> list[int]:
        return [k for k in real if pred(k)]

    tasks: list[LeakTask] = []
    specs: list[tuple[str, str, list[int], Callable[[int], str]]] = [
        (
            "families",
            "A vs B vs store-bearing arms (the report's recorded residual leak)",
            real,
            lambda k: _family(cfg[k]),
        ),
        (
            "C-vs-B-armed",
            "protocol arm vs self-ask with store, store-bearing items only (what the pack is for)",
            subset(lambda k: _family(cfg[k]) == "store-bearing"),
            lambda k: "C" if cfg[k].startswith("C") else "B-armed",
        ),
        (
            "curator",
            "with vs without curator, store-bearing items only",
            subset(lambda k: _family(cfg[k]) == "store-bearing"),
            lambda k: "+cur" if cfg[k].endswith("+cur") else "-cur",
        ),
        ("configurations", "all six configurations", real, lambda k: cfg[k]),
    ]
    if any(key.items[order[k]].group for k in real):  # a human-curated arm (decision 560)
        arm = [key.items[i].arm() for i in order]
        specs.append(
            (
                "human-curator",
                "human- vs model-curated runs of the curated configurations",
                subset(lambda k: cfg[k].endswith("+cur")),
                lambda k: "human" if arm[k] != cfg[k] else "model",
            )
        )
    if any(key.items[i].kind == "control" for i in order):
        specs.append(
            (
                "controls",
                "constructed control items vs real items",
                list(range(len(order))),
                lambda k: key.items[order[k]].kind,
            )
        )
    for name, desc, idx, lab in specs:
        x = x_all[idx] if idx else np.zeros((0, len(FEATURES)))
        task = _run_task(name, desc, x, [lab(k) for k in idx], seed=seed, permutations=permutations)
        tasks.append(task.model_copy(update={"residual": name in ("families", "configurations")}))
    x_lex = lexical_matrix([pack.items[i].sections for i in order])
    tasks += _lexical_tasks(x_lex, order, key, seed=seed, permutations=permutations)
    return LeakReport(
        pack_id=pack.manifest.pack_id,
        features=list(FEATURES),
        classifier=(
            "StandardScaler + RidgeClassifier, stratified k-fold (k = min(5, smallest class)), "
            f"{permutations} label permutations, seed {seed}"
        ),
        tasks=tasks,
    )


def _lexical_tasks(
    x: np.ndarray, order: list[str], key: PackKey, *, seed: int, permutations: int
) -> list[LeakTask]:
    """One wording task per pair of configurations (real items), and controls vs items."""
    real = [k for k, i in enumerate(order) if key.items[i].kind == "run"]
    cfg = {k: key.items[order[k]].config for k in real}
    configs = sorted(set(cfg.values()))
    specs: list[tuple[str, str, list[int], list[str], bool]] = []
    for n, a in enumerate(configs):
        for b in configs[n + 1 :]:
            idx = [k for k in real if cfg[k] in (a, b)]
            residual = _family(a) != _family(b)
            specs.append((f"lexical: {a} vs {b}", f"wording, {a} vs {b}", idx,
                          [cfg[k] for k in idx], residual))  # fmt: skip
    store = [k for k in real if _family(cfg[k]) == "store-bearing"]
    arm = ["C" if cfg[k].startswith("C") else "B-armed" for k in store]
    specs.append(("lexical: C vs B-armed", "wording, protocol arm vs self-ask with store "
                  "(what the pack is for)", store, arm, False))  # fmt: skip
    if any(key.items[i].kind == "control" for i in order):
        idx = list(range(len(order)))
        kinds: list[str] = [key.items[order[k]].kind for k in idx]
        specs.append(("lexical: controls", "wording, control items vs real items", idx, kinds,
                      False))  # fmt: skip
    out: list[LeakTask] = []
    for name, desc, idx, labels, residual in specs:
        res = lexical_test(x[idx], labels, seed=seed, permutations=permutations) if idx else None
        out.append(_lexical_task(name, desc, labels, res, residual))
    return out


def _lexical_task(name: str, desc: str, labels: list[str], res: object, residual: bool) -> LeakTask:
    from curiosity_tui.packs.lexical import LexicalResult

    counts = dict(sorted(Counter(labels).items()))
    if not isinstance(res, LexicalResult):
        verdict = "not testable: needs two classes with at least two items each"
        acc = chance = p = None
        folds = None
    else:
        acc, chance, p, folds = res.accuracy, res.chance, res.p_value, res.folds
        if p < ALPHA and acc > chance:
            verdict = (
                f"LEAK: the wording predicts this split ({acc:.2f} accuracy against "
                f"{chance:.2f} chance, p = {p:.3f})"
            )
        else:
            verdict = (
                f"no evidence of a leak at this size ({acc:.2f} against {chance:.2f} chance, "
                f"p = {p:.3f}); a small pack cannot show the absence of one"
            )
    return LeakTask(
        task=name,
        description=desc,
        n_items=len(labels),
        classes=counts,
        folds=folds,
        accuracy=acc,
        chance=chance,
        p_value=p,
        top_features=[],
        verdict=verdict + (" [residual: the report's recorded family leak]" if residual else ""),
        features="lexical",
        residual=residual,
    )
