"""The ablation report (report.html) in a real headless browser at 1,280 px, as tests/cpu/test_report.py
checks the scoring report: short, nothing wider than the window, every figure loaded; the heatmaps in
rank order; ranks written as ranks. Built without Ray from the job's own pieces: the fan-out's batch
function over part of the shipped sample (7 extractors x 2 comparators, 8 models, 8 tasks), then
run.py's comparison tables, figures and report."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.cpu.test_report import browse, chromium, png_size  # noqa: F401  (chromium: the fixture)
from xfinder_ray.ablation import run
from xfinder_ray.ablation.config import load_ablation_config
from xfinder_ray.ablation.fanout import BASE_COLUMNS, fanout_batch
from xfinder_ray.ablation.figures import heatmap_table, rank_labels
from xfinder_ray.records import FIELDS, check
from xfinder_ray.storage import resolve

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "xfinder_ray" / "data" / "sample_responses.parquet"
EXTRACTORS = ["rules", "opencompass", "lm-eval", "ultraeval"]
EXTRACTORS += ["opencompass:first_capital", "lm-eval:gsm8k-strict", "lm-eval:multi_choice"]  # as the demo
WIDTH = 1280
MAX_HEIGHT = 4500  # px, with 7 extractors (the page was ~9,900 px before)

# After `load`: the window's width, the widest element's right edge, the images, the page's height.
PROBE = """<script>
window.addEventListener('load', () => {
  const right = [...document.body.querySelectorAll('*')].map(e => Math.ceil(e.getBoundingClientRect().right));
  const tables = [...document.querySelectorAll('table')].map(t => Math.ceil(t.getBoundingClientRect().right));
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src'), w: i.naturalWidth, h: i.naturalHeight,
                                               shown: Math.round(i.getBoundingClientRect().width)}));
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({width: document.documentElement.clientWidth, right: Math.max(...right),
    scroll: document.documentElement.scrollWidth, tables, imgs, height: document.documentElement.scrollHeight});
  document.body.appendChild(pre);
});
</script>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """An ablation output (comparison/, figures/, report.html) from 192 sample rows, one invalid."""
    rows = pd.read_parquet(SAMPLE).groupby(["model", "task"]).head(3).reset_index(drop=True)
    rows.loc[0, "correct_answer"] = None  # a validation reject, as the job counts it
    rows["reject_reason"] = [check({f: r[f] for f in FIELDS}) for r in rows.to_dict("records")]
    rows["source_file"], rows["source_row"], rows["tags"] = "sample.parquet", range(len(rows)), None
    out = tmp_path_factory.mktemp("ablation_report") / "out"
    comparators = ["math-verify", "opencompass"]
    cfg = load_ablation_config(
        REPO / "configs" / "ablation.yaml",
        [f"output={out}", f"ablation.comparators=[{','.join(comparators)}]"],
    )
    cfg.ablation.extractors = EXTRACTORS
    wide = fanout_batch(rows[list(BASE_COLUMNS)], extractors=EXTRACTORS, comparators=comparators).to_pandas()
    location = resolve(str(out))
    counts = run.reconcile(wide, len(rows), EXTRACTORS, comparators)
    tables = run.comparison_tables(cfg, location, wide, EXTRACTORS)
    pngs = run.write_figures(location, tables, wide, EXTRACTORS, {}, cfg.primary)
    skipped = [{"extractor": "xfinder:xFinder-qwen1505", "reason": "model folder not found"}]
    run.write_report(cfg, location, tables, counts, len(rows), EXTRACTORS, {}, skipped, pngs, pd.DataFrame())
    return out / "report.html"


def test_rank_labels_mark_ties():
    macro = pd.Series([0.9, 0.7, 0.7, 0.5], index=["a", "b", "c", "d"])
    assert rank_labels(macro) == ["1. a", "2= b", "2= c", "4. d"]


def test_heatmap_rows_are_in_rank_order(report):
    accuracy = pd.read_parquet(report.parent / "comparison" / "accuracy.parquet")
    ranks = pd.read_parquet(report.parent / "comparison" / "ranks.parquet")
    for e in EXTRACTORS:
        table, labels = heatmap_table(accuracy, e, "math-verify")
        overall = ranks[(ranks["extractor"] == e) & (ranks["comparator"] == "math-verify")]
        overall = overall[overall["task"] == "(all tasks)"].set_index("model")["rank"]
        assert overall.loc[table.index].is_monotonic_increasing, e  # the job's own ranks, best first
        assert [label.split(" ", 1)[1] for label in labels] == list(table.index)
        assert list(table.columns) == sorted(table.columns, key=str.lower)


def test_the_page_is_compact_and_ranks_are_ranks(report):
    page = report.read_text()
    assert "<script" not in page
    shifts = page.split("<h2>Largest rank shifts")[1].split("</table>")[0]
    assert shifts.count("<tr>") == 1 + 10  # the header and the 10 largest; the rest in the CSV
    assert not re.search(r"\d\.\d{3}", shifts)  # `1.5 (68.8)`, not `1.500`
    accuracy = page.split("<h2>Accuracy per extractor")[1].split("</table>")[0]
    assert accuracy.count("<tr>") == 1 + len(EXTRACTORS)  # one row per extractor, comparators as columns
    for png in (report.parent / "figures").glob("*.png"):  # every figure is on the page or linked from it
        assert f"figures/{png.name}" in page


def test_the_report_fits_1280_px_in_a_real_browser(chromium, report):  # noqa: F811
    copy = report.with_name("_probe.html")
    copy.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    done = browse(chromium, copy.as_uri(), f"--window-size={WIDTH},1000", "--dump-dom")
    found = re.search(r"<pre id=\"probe\">(.*?)</pre>", done.stdout, re.S)
    assert found, f"the page did not finish loading: {done.stderr[-2000:]}"
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["width"] == WIDTH
    assert seen["scroll"] <= WIDTH and seen["right"] <= WIDTH, seen  # no horizontal overflow
    assert max(seen["tables"]) <= WIDTH - 16, seen["tables"]  # every table inside the page's margin
    assert len(seen["imgs"]) == 1 + len(EXTRACTORS)  # the bump chart and one heatmap per extractor
    for img in seen["imgs"]:
        assert img["w"] > 300 and img["h"] > 150, img  # loaded and decoded
        assert img["shown"] <= img["w"], img  # never blown up past its pixels
    assert seen["height"] < MAX_HEIGHT, f"the page is {seen['height']} px high"
    shot = report.with_name("screenshot.png")
    done = browse(
        chromium, report.as_uri(), f"--screenshot={shot}", f"--window-size={WIDTH},{seen['height']}"
    )
    assert shot.exists(), done.stderr[-2000:]
    assert png_size(shot.read_bytes()) == (WIDTH, seen["height"])
    assert shot.stat().st_size > 100_000  # tables and figures: a blank page of this size is ~15 KB
