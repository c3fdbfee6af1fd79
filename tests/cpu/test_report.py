"""report.html in a real headless browser (Debian's chromium-headless-shell, file:// URL, no network):
the page loads, every figure is there, decoded and non-empty, the page is short and in rank order,
and a screenshot is taken and checked for size. `make test` installs the browser (`make browser`);
without it (and without apt to install it) the browser tests are skipped, saying so."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from xfinder_ray.extractors.rules import NO_ANSWER_REASONS
from xfinder_ray.report import FIGURES, bump_chart, no_answer_html, write_report
from xfinder_ray.stages.aggregate import wilson
from xfinder_ray.storage import resolve

BROWSER = "chromium-headless-shell"
WIDTH = 1200
MAX_HEIGHT = 2600  # px: one short page (the ablation report is ~9,600)

# Appended to a copy of the page: after `load`, what each <img> decoded to, and the page's height.
PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => ({src: i.getAttribute('src'), complete: i.complete,
                                               w: i.naturalWidth, h: i.naturalHeight}));
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({imgs, height: document.documentElement.scrollHeight});
  document.body.appendChild(pre);
});
</script>"""


@pytest.fixture(scope="session")
def chromium() -> str:
    """The browser's path; installed with apt-get where it is missing and this process may (root)."""
    found = shutil.which(BROWSER)
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", BROWSER],
            capture_output=True,
            timeout=600,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        found = shutil.which(BROWSER)
    if found is None:
        pytest.skip(
            f"{BROWSER} is not installed and could not be installed here (`make browser`, or "
            f"`apt-get install {BROWSER}` as root with network access; the test run itself has none)"
        )
    return found


def browse(chromium: str, url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            chromium,
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def probe(chromium: str, page: Path) -> dict:
    """Load `page` (a copy with PROBE, next to it: same relative figure paths) and read the probe."""
    copy = page.with_name("_probe.html")
    copy.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    done = browse(chromium, copy.as_uri(), "--dump-dom")
    found = re.search(r"<pre id=\"probe\">(.*?)</pre>", done.stdout, re.S)
    assert found, f"the page did not finish loading: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


MODELS = ["m-<b>&amp;", "alpha", "zeta", "beta", "gamma", "delta", "eta", "theta"]  # a name to escape
TASKS = ["MMLU", "GSM8K", "BoolQ", "ARC-Challenge", "SST-2", "MATH"]


def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = []
    for i, model in enumerate(MODELS):
        for j, task in enumerate(TASKS):
            n = 40
            correct = max(0, 36 - 3 * i - j)
            lo, hi = wilson(correct, n)
            rows.append(
                dict(model=model, task=task, n=n, correct=correct, accuracy=correct / n,
                     no_valid_answer_rate=0.02 * i, ci95_low=lo, ci95_high=hi)
            )  # fmt: skip
    by_task = pd.DataFrame(rows)
    g = by_task.groupby("model", sort=False)
    by_model = pd.DataFrame(
        {
            "n": g["n"].sum(),
            "correct": g["correct"].sum(),
            "accuracy_macro": g["accuracy"].mean(),
            "no_valid_answer_rate": g["no_valid_answer_rate"].mean(),
        }
    ).reset_index()
    by_model["accuracy_micro"] = by_model["correct"] / by_model["n"]
    by_model[["ci95_low", "ci95_high"]] = [
        wilson(c, n) for c, n in zip(by_model["correct"], by_model["n"], strict=True)
    ]
    by_model["judged"] = by_model["n"]  # as build_tables writes them: judged, input, rejected
    by_model["input"], by_model["rejected"] = by_model["n"] + 2, 2
    # the no valid answers split by reason, as build_tables writes them (every reason, most of them 0)
    for reason in NO_ANSWER_REASONS:
        by_model[f"no_answer_{reason}"] = 0.0
    by_model["no_answer_truncated"] = by_model["no_valid_answer_rate"] * 0.75
    by_model["no_answer_loop"] = by_model["no_valid_answer_rate"] * 0.25
    by_model = by_model.sort_values("accuracy_macro", ascending=False).reset_index(drop=True)
    return by_task, by_model


def written_report(tmp_path: Path, compare_to: str | None = None) -> Path:
    by_task, by_model = tables()
    out = tmp_path / "run"
    write_report(resolve(str(out)), by_task, by_model, "rules:rules-2", "math-verify", compare_to)
    if compare_to:  # what the diff writes after the commit
        moves = pd.DataFrame(
            {"model": by_model["model"], "rank_old": range(8, 0, -1), "rank_new": range(1, 9)}
        )
        (out / "diff").mkdir()
        (out / "diff" / "rank_moves.png").write_bytes(bump_chart(moves, "before", "after"))
    return out / "report.html"


def test_report_is_short_sorted_by_rank_and_escaped(tmp_path):
    page = written_report(tmp_path).read_text()
    names = [html.escape(m) for m in tables()[1]["model"]]
    assert [page.index(f">{n}</td>") for n in names] == sorted(page.index(f">{n}</td>") for n in names)
    assert "<b>" not in page and "m-&lt;b&gt;&amp;amp;" in page
    assert "<script" not in page
    for name in FIGURES:
        data = (tmp_path / "run" / "figures" / name).read_bytes()
        assert min(png_size(data)) > 100


def test_report_shows_the_no_answers_by_reason(tmp_path):
    page = written_report(tmp_path).read_text()
    section = page.split("<h2>No answer, by reason</h2>")[1]
    head = section.split("</tr>")[0]
    assert "truncated %" in head and "loop %" in head and "hedged" not in head  # only reasons that occur
    # eta: 2% x 6 = 12.0% no valid answer, 9.0% truncated, 3.0% loop
    assert "<td class='m'>eta</td><td>240</td><td>12.0</td><td>9.0</td><td>3.0</td>" in section
    _, by_model = tables()
    no_reasons = by_model.drop(columns=[c for c in by_model if c.startswith("no_answer_")])
    assert no_answer_html(no_reasons) == ""  # tables without the reason columns: no section


def test_report_in_a_real_browser(chromium, tmp_path):
    page = written_report(tmp_path, compare_to="s3://bucket/scored/2026-11-29")
    seen = probe(chromium, page)
    srcs = sorted(i["src"] for i in seen["imgs"])
    assert srcs == sorted([f"figures/{n}" for n in FIGURES] + ["diff/rank_moves.png"])
    for img in seen["imgs"]:
        assert img["complete"] and img["w"] > 100 and img["h"] > 100, img  # loaded, decoded, non-empty
    assert seen["height"] < MAX_HEIGHT, f"page is {seen['height']} px high"
    shot = tmp_path / "shot.png"
    done = browse(chromium, page.as_uri(), f"--screenshot={shot}", f"--window-size={WIDTH},{seen['height']}")
    assert shot.exists(), done.stderr[-2000:]
    assert png_size(shot.read_bytes()) == (WIDTH, seen["height"])
    assert shot.stat().st_size > 60_000  # the figures are in it: a blank page of this size is ~10 KB


def test_the_probe_sees_a_broken_figure(chromium, tmp_path):
    page = written_report(tmp_path)
    (page.parent / "figures" / "heatmap.png").write_bytes(b"not a png")
    broken = [i for i in probe(chromium, page)["imgs"] if i["w"] == 0]
    assert [i["src"] for i in broken] == ["figures/heatmap.png"]


def scored_run(tmp_path: Path) -> Path:
    """A run folder whose accuracy/ the job's own functions wrote (no Ray): a and b tie (3 of 4 on
    each task, rules unsure of a's), c is on one task only, d last; a broken line has no model."""
    import pyarrow.parquet as pq

    from xfinder_ray.stages.aggregate import (
        build_tables,
        compare_models,
        count_outcomes,
        question_key,
        write_tables,
    )
    from xfinder_ray.stages.write import JUDGMENT_SCHEMA, REJECT_SCHEMA, _table

    def row(m, t, q, right, tier):
        return dict(record_id=f"{m}{t}{q}", model=m, task=t, question_key=question_key(t, f"q{q}"),
                    judgment=right, extracted_answer="A", confidence=tier)  # fmt: skip

    js = [
        row(m, t, q, q != 0, "unsure" if m == "a" else "certain")
        for m in "ab"
        for t in ("t1", "t2")
        for q in range(4)
    ]
    js += [row("d", t, q, q == 0, "likely") for t in ("t1", "t2") for q in range(4)] + [
        row("c", "t1", 0, True, None)
    ]
    run = tmp_path / "run"
    for folder in ("judgments", "rejects"):
        (run / folder).mkdir(parents=True)
    pq.write_table(_table(pd.DataFrame(js), JUDGMENT_SCHEMA), run / "judgments" / "part-0.parquet")
    broken = pd.DataFrame([{"reason": "not valid JSON (x)", "stage": "read"}])
    pq.write_table(_table(broken, REJECT_SCHEMA), run / "rejects" / "part-0.parquet")
    outcomes = count_outcomes(resolve(str(run / "judgments")), resolve(str(run / "rejects")))
    by_task, by_model = build_tables(outcomes)
    comparison = compare_models(outcomes, by_model, resamples=50)
    write_tables(resolve(str(run / "accuracy")), by_task, by_model, "rules:rules-2", comparison)
    note = "xFinder checkpoint not found at '<here>'; using the model-free `rules` extractor instead"
    write_report(resolve(str(run)), by_task, by_model, "rules:rules-2", "math-verify", None, [note])
    return run


def test_report_ranks_as_the_leaderboard_does(tmp_path):
    from xfinder_ray.report import heatmap_table, ranked_rows

    run = scored_run(tmp_path)
    page = (run / "report.html").read_text()
    board = (run / "accuracy" / "leaderboard.md").read_text()
    ranked, _, fewer = page.partition("<h2>Scored on fewer tasks</h2>")
    cells = re.findall(r"<tr><td>(\d+=?)</td><td>[^<]*</td><td>[^<]*</td><td class='m'>([^<]+)</td>", ranked)
    assert cells == [("1=", "a"), ("1=", "b"), ("3", "d")]
    assert [re.search(rf"^\| (\d+=?) \|[^\n]*\| {m} \|", board, re.M).group(1) for _, m in cells] == [
        "1=",
        "1=",
        "3",
    ]
    assert "<td class='m'>c</td>" in fewer.split("</table>")[0] and "<td>1/2</td>" in fewer
    assert "(unknown)" not in page and "1 rejected without a readable model" in page
    # the fallback says so, escaped, with the share of verdicts rules was unsure of (a's 8 of 25)
    assert "&lt;here&gt;" in page and "<here>" not in page
    assert "8 of 25 verdicts (32.0%) are unsure" in page
    tiers = page.split("<h2>Rules' confidence</h2>")[1].split("</table>")[0]
    assert "<td class='m'>a</td><td>8</td><td>0.0</td><td>0.0</td><td>100.0</td>" in tiers
    rows = ranked_rows(resolve(str(run)), pd.read_parquet(run / "accuracy" / "by_model.parquet"))
    by_task = pd.read_parquet(run / "accuracy" / "by_model_task.parquet")
    assert list(heatmap_table(by_task, rows).columns) == ["t1", "t2"]  # no (unknown) column
    assert list(rows["model"]) == ["a", "b", "d", "c"]


def test_a_run_without_any_model_gets_a_report_not_a_crash(tmp_path):
    # every record rejected, none attributable to a model: by_model holds only (unknown)
    from xfinder_ray.report import ranked_rows
    from xfinder_ray.stages.aggregate import UNKNOWN, Outcomes, build_tables
    from xfinder_ray.storage import resolve

    items = pd.DataFrame({"model": [], "task": [], "question_key": [], "judged": [], "correct": []})
    _, by_model = build_tables(Outcomes({(UNKNOWN, UNKNOWN): [0, 0, 0, 25, 0]}, items))
    rows = ranked_rows(resolve(str(tmp_path)), by_model)
    assert len(rows) == 0 and "close" in rows.columns
    from xfinder_ray.report import leaderboard_html

    page = leaderboard_html(rows, pd.DataFrame(index=pd.Index([], name="model")))
    assert "No records were scored, so no model is ranked" in page
