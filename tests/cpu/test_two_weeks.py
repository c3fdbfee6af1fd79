"""The newcomer's two weeks (docs/reviews: newcomer-second-pass, B1, M1-M3): a leaderboard maintainer
scores week 1, then week 2 with compare_to=week 1, on their own small data, and sends the pages on.

Week 1: 4 models x 4 tasks x 3 questions in a JSONL and a Parquet file, plus a broken JSON line (a
reject with no model) and a record without a gold answer; acme-7b and reasoner-r1 tie at the top.
Week 2: 5 responses changed, the gold of yn3 fixed (yes -> no) in every copy but newbie-3b's (a new
model), reasoner-r1's MyCSQA rows dropped (3 of 4 tasks: not ranked), the same broken line.

One ranking everywhere: leaderboard.md, ranks.parquet, by_model.csv, report.html, diff.md (both
directions), diff/models.parquet and the bump chart's data agree; (unknown) is never ranked or drawn.
What rests on guesses: rules' tiers per model, equal to judgments/' own counts. Data problems: the
conflicting gold is counted, noted, written and kept out of the paired tests; the diff lists every
input change. Two real scoring jobs (Ray), then the report in the headless browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cpu.test_report import browse, chromium, png_size, probe  # noqa: F401 (chromium: a fixture)

QUESTIONS = {  # task -> (key_answer_type, answer range, [(id, question, gold)])
    "MyMCQ": (
        "alphabet_option",
        [["A", "Oxygen"], ["B", "Carbon dioxide"], ["C", "Helium"]],
        [("q1", "Which gas do plants absorb?", "B"), ("q2", "Which gas do we breathe?", "A"),
         ("q3", "Which gas fills party balloons?", "C")],
    ),
    "MyBoolQ": (
        "categorical_label",
        ["yes", "no"],
        [("yn1", "Is the Pacific the largest ocean?", "yes"), ("yn2", "Is the Moon a planet?", "no"),
         ("yn3", "Is water a compound?", "yes")],
    ),
    "MyGSM": (
        "math",
        "a(n) number / set / vector / matrix / interval / expression / function / equation / inequality",
        [("m1", "12 pencils cost $8. What do 12 pencils cost?", "8"),
         ("m2", "Diego has 6 packs of 24 marbles and gives away 51. How many are left?", "93"),
         ("m3", "A box holds 4 rows of 3 eggs. How many eggs?", "12")],
    ),
    "MyCSQA": (
        "short_text",
        ["garage", "refrigerator", "mailbox"],
        [("s1", "Where would you keep milk so it does not spoil?", "refrigerator"),
         ("s2", "Where do letters arrive?", "mailbox"), ("s3", "Where would you park a car?", "garage")],
    ),
}  # fmt: skip
# Per model and task, each question: 1 right, 0 wrong, r a refusal (rules: [No valid answer]).
WEEK1 = {
    "acme-7b": {"MyMCQ": "111", "MyBoolQ": "111", "MyGSM": "110", "MyCSQA": "111"},
    "reasoner-r1": {"MyMCQ": "111", "MyBoolQ": "111", "MyGSM": "111", "MyCSQA": "110"},
    "json-bot": {"MyMCQ": "110", "MyBoolQ": "11r", "MyGSM": "111", "MyCSQA": "100"},
    "tiny-1b": {"MyMCQ": "100", "MyBoolQ": "10r", "MyGSM": "000", "MyCSQA": "100"},
}
WEEK2 = {  # 5 responses changed; yn3 answered as in week 1 (its gold changes, not the answers)
    "acme-7b": {**WEEK1["acme-7b"], "MyCSQA": "110"},
    "reasoner-r1": {t: v for t, v in WEEK1["reasoner-r1"].items() if t != "MyCSQA"},
    "json-bot": {**WEEK1["json-bot"], "MyMCQ": "111", "MyCSQA": "110"},
    "tiny-1b": {**WEEK1["tiny-1b"], "MyMCQ": "110", "MyGSM": "100"},
    "newbie-3b": {"MyMCQ": "111", "MyBoolQ": "111", "MyGSM": "111", "MyCSQA": "110"},
}
STYLE = {  # how each model words an answer: rules reads all of them; tiny-1b's as `unsure`
    "acme-7b": "The answer is {}.",
    "newbie-3b": "The answer is {}.",
    "reasoner-r1": "<think>Let me check each option before I answer.</think>The answer is {}.",
    "json-bot": '{{"answer": "{}"}}',
    "tiny-1b": {"MyMCQ": "I think it's {}", "MyBoolQ": "{}, it is.", "MyGSM": "I guess around {}",
                "MyCSQA": "Maybe the {}"},
}  # fmt: skip
# week 1 ranks as leaderboard.md must show them (acme-7b and reasoner-r1: 11 of 12 each, a tie)
RANKS_1 = [("1=", "acme-7b"), ("1=", "reasoner-r1"), ("3", "json-bot"), ("4", "tiny-1b")]
RANKS_2 = [("1", "newbie-3b"), ("2", "json-bot"), ("3", "acme-7b"), ("4", "tiny-1b")]


def wrong(kat: str, gold: str, answer_range) -> str:
    if kat == "math":
        return str(int(gold) + 1)
    options = [o[0] if isinstance(o, list) else o for o in answer_range]
    return next(o for o in options if o != gold)


def records(week: dict, yn3_gold: dict[str, str]) -> list[dict]:
    rows = []
    for model, tasks in week.items():
        for task, marks in tasks.items():
            kat, answer_range, questions = QUESTIONS[task]
            for (qid, question, gold), mark in zip(questions, marks, strict=True):
                gold = yn3_gold.get(model, gold) if qid == "yn3" else gold
                answered = gold if mark == "1" else wrong(kat, gold, answer_range)
                if qid == "yn3":  # the answers stay as in week 1 (yes) while the gold moves
                    answered = "yes"
                style = STYLE[model] if isinstance(STYLE[model], str) else STYLE[model][task]
                text = "I cannot answer that." if mark == "r" else style.format(answered)
                if model == "tiny-1b" and task == "MyBoolQ" and mark != "r":
                    text = text.capitalize()
                rows.append(
                    dict(
                        record_id=f"{qid}-{model}",
                        model=model,
                        task=task,
                        key_answer_type=kat,
                        question=question,
                        llm_output=text,
                        standard_answer_range=answer_range if kat == "math" else json.dumps(answer_range),
                        correct_answer=gold,
                    )
                )
    return rows


def write_week(folder: Path, rows: list[dict]) -> None:
    """Half the models as JSONL (with a broken line and a record without gold), half as Parquet."""
    folder.mkdir(parents=True)
    models = sorted({r["model"] for r in rows})
    as_jsonl = [r for r in rows if r["model"] in models[::2]]
    as_parquet = [r for r in rows if r["model"] not in models[::2]]
    lines = [json.dumps(r) for r in as_jsonl]
    lines.insert(3, '{"record_id": "broken", "model": "acme-7b", "llm_output": "unterminated')
    extra = {**as_jsonl[0], "record_id": "no-gold"}
    del extra["correct_answer"]
    lines.append(json.dumps(extra))
    (folder / "week.jsonl").write_text("\n".join(lines) + "\n")
    pq.write_table(pa.Table.from_pylist(as_parquet), folder / "week.parquet")


def board_rows(markdown: str) -> list[tuple[str, str]]:
    """(rank, model) of the leaderboard.md ranked table (before the sections listed apart)."""
    table = markdown.split("\n## ")[0]
    return [(m[1], m[2]) for m in re.finditer(r"^\| (\d+=?) \| [^|]* \| [^|]* \| ([^|]+?) \|", table, re.M)]


def report_rows(page: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(rank, model) of report.html's ranked table, and the models of its "Scored on fewer tasks"."""
    ranked_part, _, rest = page.partition("<h2>Scored on fewer tasks</h2>")
    table = ranked_part.split("<table>")[1].split("</table>")[0]
    ranked = re.findall(r"<tr><td>(\d+=?)</td><td>[^<]*</td><td>[^<]*</td><td class='m'>([^<]+)</td>", table)
    fewer = re.findall(r"<tr><td class='m'>([^<]+)</td>", rest.split("</table>")[0]) if rest else []
    return ranked, fewer


def diff_rows(markdown: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """diff.md: (rank, move, model) of the ranked models, and (move, model) of those not ranked."""
    per_model = markdown.split("## Per model")[1].split("\n## ")[0]
    ranked_part, _, others = per_model.partition("### Not ranked in the new run")
    ranked = re.findall(r"^\| (\d+=?) \| ([^|]+?) \| ([^|]+?) \|", ranked_part, re.M)
    rest = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| [\d–]", others, re.M)
    return ranked, rest


@pytest.mark.ray
def test_two_weeks_one_ranking_everywhere(ray_local, chromium, tmp_path):  # noqa: F811
    from xfinder_ray.config import load_config
    from xfinder_ray.diff import diff_runs
    from xfinder_ray.pipeline import run
    from xfinder_ray.report import bump_points

    write_week(tmp_path / "byo", records(WEEK1, {}))
    write_week(tmp_path / "byo2", records(WEEK2, {m: "no" for m in WEEK2 if m != "newbie-3b"}))
    week1, week2 = tmp_path / "runs" / "week1", tmp_path / "runs" / "week2"
    run(
        load_config(
            "configs/local.yaml", [f"input={tmp_path / 'byo'}", f"output={week1}", "extractor.name=rules"]
        )
    )
    # week 2 as a machine without the xFinder checkpoint runs it: the embedded fallback to rules
    second = run(
        load_config(
            "configs/local.yaml",
            [
                f"input={tmp_path / 'byo2'}",
                f"output={week2}",
                f"compare_to={week1}",
                f"xfinder.model_source={tmp_path / 'no-checkpoint'}",
            ],
        )  # fmt: skip
    )
    assert second.manifest["extractor"].startswith("rules:")

    # --- one ranking: leaderboard.md, ranks.parquet, by_model.csv, report.html --------------------------
    for out, expected, unranked in ((week1, RANKS_1, []), (week2, RANKS_2, ["reasoner-r1"])):
        board = (out / "accuracy" / "leaderboard.md").read_text()
        assert board_rows(board) == expected
        apart = board.split("## Scored on fewer tasks")[1].split("\n## ")[0] if unranked else ""
        assert all(f"| {m} |" in apart for m in unranked)
        assert "| (unknown) |" not in board and "Not attributed to a model" in board
        ranks = pd.read_parquet(out / "accuracy" / "ranks.parquet")
        assert "(unknown)" not in set(ranks["model"])
        shown = {m: r.rstrip("=") for r, m in expected}
        assert {m: str(r) for m, r in zip(ranks["model"], ranks["rank"], strict=True) if m in shown} == shown
        assert set(ranks.loc[~ranks["ranked"], "model"]) == set(unranked)
        csv = pd.read_csv(out / "accuracy" / "by_model.csv")
        assert list(csv["model"][: len(expected)]) == [m for _, m in expected]  # the CSV in rank order
        assert csv.set_index("model").loc[[m for _, m in expected], "rank"].tolist() == [
            int(r.rstrip("=")) for r, _ in expected
        ]
        page = (out / "report.html").read_text()
        assert report_rows(page) == (expected, unranked)
        assert "(unknown)" not in page and "vs. above" in page
    heatmap_free_of_unknown(week2)

    # --- the diff, both directions: ranks from ranks.parquet, moves only between ranked runs ---------
    forward = (week2 / "diff.md").read_text()
    ranked, rest = diff_rows(forward)
    assert ranked == [
        ("1", "new", "newbie-3b"),
        ("2", "↑1", "json-bot"),
        ("3", "↓2", "acme-7b"),
        ("4", "=", "tiny-1b"),
    ]
    assert rest == [("not ranked now (fewer tasks)", "reasoner-r1")]
    assert "(unknown)" not in forward
    backward = diff_runs(str(week2), str(week1), str(tmp_path / "back"))
    ranked, rest = diff_rows(backward.markdown)
    assert ranked == [
        ("1=", "↑2", "acme-7b"),
        ("1=", "ranked now", "reasoner-r1"),
        ("3", "↓1", "json-bot"),
        ("4", "=", "tiny-1b"),
    ]
    assert rest == [("gone", "newbie-3b")]
    models = pd.read_parquet(week2 / "diff" / "models.parquet").set_index("model")
    assert models.loc["newbie-3b", ["lost", "gained", "common"]].tolist() == [0, 0, 0]
    assert "| new | newbie-3b | – | 91.7 | – | – | – | – | – | – |" in forward  # P1: "–", not 0.0
    drawn = bump_points(pd.read_parquet(week2 / "diff" / "models.parquet")).set_index("model").sort_index()
    expected_points = pd.DataFrame(
        {"rank_old": [1, 1, 3, 4, None], "rank_new": [3, None, 2, 4, 1]},
        index=["acme-7b", "reasoner-r1", "json-bot", "tiny-1b", "newbie-3b"],
    ).sort_index()  # what rank_moves.png draws: ranked models only, a point where ranked in one run
    pd.testing.assert_frame_equal(drawn, expected_points.astype(float), check_names=False)

    # --- data problems: the conflicting gold, and every input change ---------------------------------
    conflicts = pd.read_parquet(week2 / "accuracy" / "conflicts.parquet")
    assert sorted(zip(conflicts["correct_answer"], conflicts["records"], strict=True)) == [
        ("no", 4),
        ("yes", 1),
    ]
    assert conflicts["question_key"].nunique() == 1
    note = next(n for n in second.notes if "different gold answers" in n)
    assert "MyBoolQ" in note and "newbie-3b" in note and note in second.manifest["notes"]
    pairwise = pd.read_parquet(week2 / "accuracy" / "pairwise.parquet")
    pair = pairwise[(pairwise["model_a"] == "newbie-3b") & (pairwise["model_b"] == "acme-7b")].iloc[0]
    assert pair["questions"] == 11  # 12 shared, yn3 left out: newbie's right `yes` is not a win over acme
    changes = pd.read_parquet(week2 / "diff" / "input_changes.parquet")
    assert sorted(changes["record_id"]) == ["yn3-acme-7b", "yn3-json-bot", "yn3-reasoner-r1", "yn3-tiny-1b"]
    assert dict(zip(changes["model"], changes["flipped"], strict=True)) == {
        "acme-7b": True, "reasoner-r1": True, "json-bot": False, "tiny-1b": False,
    }  # fmt: skip
    assert set(changes["changed"]) == {"correct_answer"}
    assert "| input | yes | yes | yes → no | right->wrong |" in forward
    assert "## Inputs changed: 4 records (correct_answer: 4)" in forward

    # --- what rests on guesses: rules' tiers per model, as judgments/ has them -----------------------
    judgments = pd.read_parquet(week2 / "judgments")
    by_model = pd.read_parquet(week2 / "accuracy" / "by_model.parquet").set_index("model")
    for model, g in judgments.groupby("model"):
        for tier in ("certain", "likely", "unsure"):
            assert by_model.loc[model, f"rules_{tier}"] == pytest.approx((g["confidence"] == tier).mean())
    assert by_model.loc["tiny-1b", "rules_unsure"] == 1.0 and by_model.loc["acme-7b", "rules_certain"] == 1.0
    board = (week2 / "accuracy" / "leaderboard.md").read_text()
    assert (
        "## Rules' confidence" in board and "- tiny-1b: 0.0 / 0.0 / 100.0% certain / likely / unsure" in board
    )
    page = (week2 / "report.html").read_text()
    unsure = int((judgments["confidence"] == "unsure").sum())
    assert f"{unsure} of {len(judgments)} verdicts" in page  # the fallback, with its unsure share
    assert "xFinder checkpoint not found" in page and "different gold answers" in page

    # --- the page a colleague opens --------------------------------------------------------------------
    seen = probe(chromium, week2 / "report.html")
    assert all(i["complete"] and i["w"] > 100 for i in seen["imgs"]) and len(seen["imgs"]) == 4
    shot = tmp_path / "week2.png"
    browse(
        chromium,
        (week2 / "report.html").as_uri(),
        f"--screenshot={shot}",
        f"--window-size=1280,{seen['height']}",
    )
    assert png_size(shot.read_bytes()) == (1280, seen["height"]) and shot.stat().st_size > 40_000


def heatmap_free_of_unknown(out: Path) -> None:
    """by_model_task holds the unattributed reject's (unknown) cell; the heatmap draws no such column."""
    from xfinder_ray.report import heatmap_table, ranked_rows
    from xfinder_ray.storage import resolve

    by_task = pd.read_parquet(out / "accuracy" / "by_model_task.parquet")
    assert "(unknown)" in set(by_task["task"])  # the broken line: there to be left out
    rows = ranked_rows(resolve(str(out)), pd.read_parquet(out / "accuracy" / "by_model.parquet"))
    table = heatmap_table(by_task, rows)
    assert list(table.columns) == sorted(QUESTIONS) and list(table.index) == list(rows["model"])
    assert "(unknown)" not in set(rows["model"])
