"""The ablation job (xfinder_ray/ablation): real local Ray, several extractors x comparators over
one input. Counts reconcile per extractor, the agreement matrix is a proper similarity matrix,
Kendall tau-b is right, the figures are real images the report links, and on the labelled dev set
the extraction accuracy equals an independent computation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xfinder_ray.ablation.compare import ALL_TASKS, kendall_tau_b
from xfinder_ray.ablation.config import load_ablation_config
from xfinder_ray.ablation.fanout import error_col, extracted_col, judgment_col
from xfinder_ray.ablation.run import CountMismatch, reconcile, run_ablation
from xfinder_ray.config import ConfigError
from xfinder_ray.records import NO_VALID_ANSWER, InvalidRecord, validate
from xfinder_ray.resume import OutputExists

pytestmark = pytest.mark.ray

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "xfinder_ray" / "data" / "sample_responses.parquet"
KAF = REPO.parent / "shared" / "data" / "kaf_dev.jsonl"
EXTRACTORS = ["rules", "opencompass", "lm-eval", "ultraeval"]


def _small_input(path: Path) -> int:
    """~100 sample rows (8 models) plus rows that must be rejected; returns the number of lines."""
    df = pd.read_parquet(SAMPLE).groupby(["model", "task"]).head(2)
    rows = df.drop(columns=[c for c in df.columns if c.startswith("gold_") or c in ("defect",)]).to_dict(
        "records"
    )
    rows = [{k: v for k, v in r.items() if not (isinstance(v, float) and v != v)} for r in rows]
    rows.append({**rows[0], "record_id": "bad-missing", "correct_answer": None})  # invalid: null field
    rows.append(dict(rows[1]))  # a duplicate record_id: rejected
    with path.open("w") as f:
        for r in rows:
            f.write(json.dumps(r, default=str) + "\n")
        f.write("{not json\n")  # a malformed line is a reject too
    return len(rows) + 1


@pytest.fixture(scope="module")
def sample_run(ray_local, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ablation")
    n = _small_input(tmp / "in.jsonl")
    cfg = load_ablation_config(
        REPO / "configs" / "ablation.yaml",
        [
            f"input={tmp / 'in.jsonl'}",
            f"output={tmp / 'out'}",
            "ablation.comparators=[math-verify,opencompass]",
        ],
    )
    cfg.ablation.extractors = [*EXTRACTORS, "lm-eval:multi_choice"]
    result = run_ablation(cfg)
    return n, tmp / "out", result.manifest


def test_counts_reconcile_per_extractor(sample_run):
    n, out, manifest = sample_run
    counts = manifest["counts"]
    assert counts["input"] == n
    assert counts["rejected_by_validation"] == 3  # null field, duplicate id, malformed line
    rejects = pd.read_parquet(out / "rejects" / "rejects.parquet")
    for e, c in manifest["counts"]["per_extractor"].items():
        assert c["judged"] + c["rejected"] == n
        mine = rejects[rejects["extractor"].isna() | (rejects["extractor"] == e)]
        assert len(mine) == c["rejected"]
        for comp in ("math-verify", "opencompass"):
            j = pd.read_parquet(next((out / "judgments").glob(f"{e.replace(':', '.')}__{comp}/*.parquet")))
            assert len(j) == c["judged"] and j["judgment"].dtype == bool
            assert {"record_id", "model", "task", "key_answer_type", "extracted", "judgment"} <= set(
                j.columns
            )
    assert json.loads((out / "manifest.json").read_text())["status"] == "committed"
    # the accuracy table counts exactly the judged rows
    acc = pd.read_parquet(out / "comparison" / "accuracy.parquet")
    assert (acc.groupby(["extractor", "comparator"])["n"].sum() == n - 3).all()
    assert {"accuracy.csv", "agreement.csv", "ranks.csv", "kendall_tau.csv", "rank_flips.csv"} <= {
        p.name for p in (out / "comparison").iterdir()
    }


def test_reconcile_counts_extraction_failures_as_rejects():
    wide = pd.DataFrame(
        {
            "source_file": ["f"] * 3,
            "source_row": [0, 1, 2],
            "reject_reason": [None, "bad", None],
            extracted_col("a"): ["A", None, None],
            error_col("a"): [None, None, "ValueError: boom"],
            judgment_col("a", "c"): [True, None, None],
        }
    )
    counts = reconcile(wide, 3, ["a"], ["c"])
    assert counts["per_extractor"]["a"] == {"judged": 1, "rejected": 2, "extraction_errors": 1}
    with pytest.raises(CountMismatch):
        reconcile(wide, 4, ["a"], ["c"])


def test_agreement_matrix_is_symmetric_with_unit_diagonal(sample_run):
    _, out, _ = sample_run
    agr = pd.read_parquet(out / "comparison" / "agreement.parquet")
    for _, sub in agr.groupby("comparator"):
        m = sub.pivot(index="extractor_a", columns="extractor_b", values="agreement")
        assert np.allclose(np.diag(m.to_numpy()), 1.0)
        assert np.allclose(m.to_numpy(), m.to_numpy().T)
        assert ((m >= 0) & (m <= 1)).all().all()
        assert sub["agreement"].lt(1).any()  # the extractors do disagree somewhere


def test_kendall_tau_b_hand_computed():
    # x = 1,2,3,4 ; y = 1,3,2,4: 6 pairs, 5 concordant, 1 discordant -> (5-1)/6
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # ties: x = 1,1,2,3 ; y = 1,2,2,3. Pairs: (0,1) tie in x only, (0,2) C, (0,3) C, (1,2) tie in y only,
    # (1,3) C, (2,3) C -> C=4, D=0, n0-n1 = 5, n0-n2 = 5 -> 4/5
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]) == pytest.approx(4 / 5)
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))


def test_figures_are_real_images_and_the_report_links_them(sample_run):
    from PIL import Image

    _, out, manifest = sample_run
    pngs = sorted((out / "figures").glob("*.png"))
    names = {p.name for p in pngs}
    assert "bump_ranks.png" in names and "agreement.png" in names
    assert {f"accuracy__{e.replace(':', '.')}.png" for e in manifest["extractors"]} <= names
    html = (out / "report.html").read_text()
    for p in pngs:
        with Image.open(p) as im:
            assert im.format == "PNG"
            w, h = im.size
            pixels = np.asarray(im.convert("L"), dtype=float)
        assert w >= 300 and h >= 200
        assert pixels.std() > 10  # not blank: lines, cells, text
        assert len(np.unique(pixels)) > 20
        assert f"figures/{p.name}" in html
    assert "<script" not in html.lower()


def test_review_lists_disagreements(sample_run):
    _, out, _ = sample_run
    review = pd.read_parquet(out / "review" / "review.parquet")
    assert len(review)
    for _, row in review.iterrows():
        js = {row[judgment_col(e, "math-verify")] for e in EXTRACTORS + ["lm-eval:multi_choice"]}
        xs = {row[extracted_col(e)] for e in EXTRACTORS + ["lm-eval:multi_choice"]}
        assert len(js) > 1 or len(xs) > 1


def test_config_rejects_unknown_names():
    with pytest.raises(ConfigError, match="unknown 'nope'"):
        load_ablation_config(REPO / "configs" / "ablation.yaml", ["ablation.extractors=[rules,nope]"])
    with pytest.raises(ConfigError, match="comparators"):
        load_ablation_config(REPO / "configs" / "ablation.yaml", ["ablation.comparators=[exact]"])
    with pytest.raises(ConfigError):
        load_ablation_config(REPO / "configs" / "ablation.yaml", ["ablation.extractor=[rules]"])


def _independent_extraction_accuracy(extractor: str) -> dict[str, tuple[int, int]]:
    """{key_answer_type or 'all': (correct, n)} without Ray or the ablation code."""
    from xfinder_ray.extractors import get_record_extractor
    from xfinder_ray.judging import judge

    extract = get_record_extractor(extractor)
    tally: dict[str, list[int]] = {}
    for line in KAF.read_text().splitlines():
        row = json.loads(line)
        try:
            rec = validate(row)
        except InvalidRecord:
            continue
        got, gold = extract(rec), row["gold_key_answer"]
        ok = got == gold or (
            rec.key_answer_type == "math"
            and NO_VALID_ANSWER not in (got, gold)
            and judge("math", rec.answer_range, got, gold)
        )
        for key in ("all", rec.key_answer_type):
            t = tally.setdefault(key, [0, 0])
            t[0] += int(ok)
            t[1] += 1
    return {k: (v[0], v[1]) for k, v in tally.items()}


@pytest.mark.skipif(not KAF.exists(), reason="../shared/data/kaf_dev.jsonl is not present")
def test_labelled_run_matches_an_independent_computation(ray_local, tmp_path):
    cfg = load_ablation_config(
        REPO / "configs" / "ablation.yaml",
        [f"input={KAF}", f"output={tmp_path / 'out'}", "ablation.comparators=[math-verify]"],
    )
    cfg.ablation.extractors = EXTRACTORS
    manifest = run_ablation(cfg).manifest
    assert manifest["labelled"] and manifest["counts"]["input"] == 240
    lab = pd.read_parquet(tmp_path / "out" / "comparison" / "labelled_accuracy.parquet")
    assert set(lab["group_by"]) == {"all", "key_answer_type", "tag"}
    for e in EXTRACTORS:
        expected = _independent_extraction_accuracy(e)
        mine = lab[(lab["extractor"] == e) & (lab["group_by"] != "tag")].set_index("group")
        for group, (correct, n) in expected.items():
            assert (mine.at[group, "extraction_correct"], mine.at[group, "n"]) == (correct, n), (e, group)
    # ranks: one per model per task for every extractor, and an overall ranking
    ranks = pd.read_parquet(tmp_path / "out" / "comparison" / "ranks.parquet")
    overall = ranks[ranks["task"] == ALL_TASKS]
    assert overall.groupby("extractor")["model"].nunique().eq(8).all()


def test_cli_reports_a_bad_config(capsys):
    from xfinder_ray.cli import main

    assert (
        main(["ablate", "--config", str(REPO / "configs" / "ablation.yaml"), "ablation.extractors=[nope]"])
        == 2
    )
    assert "unknown 'nope'" in capsys.readouterr().err


def test_ablation_reads_framework_outputs_through_the_import_step(ray_local, tmp_path):
    # As the scoring job: input.format=lm-eval imports the --log_samples files first.
    samples = REPO / "tests" / "data" / "importers" / "lm_eval" / "dummy"
    cfg = load_ablation_config(
        REPO / "configs" / "ablation.yaml",
        [
            f"input={samples}",
            "input.format=lm-eval",
            f"output={tmp_path / 'out'}",
            "ablation.comparators=[math-verify]",
        ],
    )
    cfg.ablation.extractors = ["rules", "lm-eval"]
    manifest = run_ablation(cfg).manifest
    imported = pd.read_parquet(tmp_path / "out" / "_imported" / "records.parquet")
    assert manifest["counts"]["input"] == len(imported) > 0
    for counts in manifest["counts"]["per_extractor"].values():
        assert counts["judged"] + counts["rejected"] == len(imported)


def test_an_interrupted_ablation_resumes_where_it_stopped(ray_local, tmp_path):
    """What a killed ablation leaves: whole records/ part files, no manifest. The rerun reads only the
    rows no part holds, and its outputs equal an uninterrupted run's."""
    import os

    import pyarrow as pa
    import pyarrow.compute as pc

    paths = []
    for i, (_, part) in enumerate(pd.read_parquet(SAMPLE).groupby("model", sort=True)):
        if i == 3:
            break
        path = tmp_path / f"in{i}.parquet"
        part.drop(columns=[c for c in part.columns if c == "defect"]).to_parquet(path)
        paths.append(str(path))

    def run(out, *extra):
        cfg = load_ablation_config(
            REPO / "configs" / "ablation.yaml", [f"input.paths=[{','.join(paths)}]", f"output={out}", *extra]
        )
        cfg.ablation.extractors = ["rules", "lm-eval"]
        return run_ablation(cfg).manifest

    whole = run(tmp_path / "whole")
    out = tmp_path / "crashed"
    run(out)
    # Keep the records of the first two input files only, as one whole part file: what the crash left.
    import pyarrow.parquet as pq

    parts = sorted((out / "records").glob("part-*.parquet"))
    table = pq.read_table(parts)
    keep = pc.is_in(table["source_file"], pa.array(sorted(set(table["source_file"].to_pylist()))[:2]))
    for p in parts:
        os.remove(p)
    pq.write_table(table.filter(keep), out / "records" / "part-earlier.parquet")
    lost = table.filter(pc.invert(keep))
    assert 0 < len(lost) < len(table)
    os.remove(out / "manifest.json")
    resumed = run(out)
    assert resumed["resume"] == {
        "resumed": True,
        "rows_done_before": whole["counts"]["input"] - len(lost),
        "rows_this_run": len(lost),
    }
    assert resumed["counts"] == whole["counts"]
    for name in ("summary", "accuracy", "agreement"):
        a = pd.read_parquet(tmp_path / "whole" / "comparison" / f"{name}.parquet")
        b = pd.read_parquet(out / "comparison" / f"{name}.parquet")
        pd.testing.assert_frame_equal(a, b)
    # A committed ablation is not silently replaced, and a different job is not continued.
    with pytest.raises(OutputExists, match="committed run"):
        run(out, "output.overwrite=false")
    os.remove(out / "manifest.json")
    with pytest.raises(OutputExists, match="different job"):
        run(out, "output.overwrite=false", "ablation.comparators=[math-verify]")


def test_config_rejects_an_unknown_reasoning_setting():
    overrides = ["ablation.extractors=[rules,xfinder:mine]", "ablation.xfinder.mine.reasoning=thoughts"]
    with pytest.raises(ConfigError, match=r"ablation\.xfinder\.mine\.reasoning='thoughts'"):
        load_ablation_config(REPO / "configs" / "ablation.yaml", overrides)
