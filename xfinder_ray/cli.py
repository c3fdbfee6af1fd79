"""The `xfinder-ray` command: re-score LLM evaluation results (extract each response's key answer with
xFinder, a verifier or the model-free rules, judge it against the correct answer) and write
judgments, accuracy tables, a leaderboard and a report.

The record-level subcommands (validate, prompt, extract, judge) read JSON Lines on stdin and write
JSON Lines on stdout, one output line per input object, every input field kept, so they compose with
files and jq. A bad line is reported on stderr with its line number; the others are still processed
and the exit status is 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TextIO

from xfinder_ray import records
from xfinder_ray.prompts import CHECKPOINTS, FORMATS, REASONING, TRAINING_MAX_LENGTH, render_prompt
from xfinder_ray.verifiers import CHECKPOINTS as VERIFIER_CHECKPOINTS
from xfinder_ray.verifiers import VARIANTS as VERIFIER_VARIANTS
from xfinder_ray.verifiers import verifier_spec

RowFn = Callable[[dict[str, Any]], dict[str, Any]]


class LineError(ValueError):
    """A record this command cannot process; the row is still written, with an `error` field."""


def _rows(stream: Iterable[str], err: TextIO) -> Iterable[tuple[int, dict[str, Any] | None]]:
    for lineno, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            # the column on this line as Python counts it (1-based), also where the error is the end of line;
            # some of json's messages end in "at" already ("Invalid control character at")
            msg = e.msg.removesuffix(" at")
            print(f"line {lineno}: not valid JSON ({msg} at column {e.pos + 1})", file=err)
            yield lineno, None
            continue
        if not isinstance(obj, dict):
            print(f"line {lineno}: expected a JSON object, got {type(obj).__name__}", file=err)
            yield lineno, None
            continue
        yield lineno, obj


def run_lines(fn: RowFn, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    status = 0
    for lineno, row in _rows(stdin, stderr):
        if row is None:
            status = 1
            continue
        try:
            out = fn(row)
        except LineError as e:
            print(f"line {lineno}: {e}", file=stderr)
            out = {**row, "error": str(e)}
            status = 1
        try:
            stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        except UnicodeEncodeError:  # lone surrogates (a "\ud800" escape in the input), or a non-UTF-8 stdout
            stdout.write(json.dumps(out) + "\n")  # \u escapes: the same JSON value, any encoding
    return status


def _valid(row: dict[str, Any]) -> records.Record:
    try:
        return records.validate(row)
    except records.InvalidRecord as e:
        raise LineError(f"invalid record: {e}") from None


def _record_id(row: dict[str, Any]) -> str | None:
    """The record_id the scoring job's duplicate check sees (stages/inventory.py: id_digest), or None."""
    names = ["record_id", *(a for a, c in records.FIELD_ALIASES.items() if c == "record_id")]
    value = next((row[n] for n in names if n in row), None)
    if isinstance(value, float) and value != value:  # NaN
        return None
    if value is None or isinstance(value, (bool, list, dict)):
        return None
    return value if isinstance(value, str) else str(value)


def cmd_validate(args: argparse.Namespace) -> RowFn:
    first: dict[str, int] = {}  # record_id -> the number of the record (1-based) that had it first
    n = 0

    def fn(row: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        reason = records.check(row)
        rid = _record_id(row)
        if rid is not None and first.setdefault(rid, n) != n and reason is None:
            # as `score` does: the first occurrence of a record_id is judged, every later one rejected
            reason = f"duplicate record_id: first occurrence is record {first[rid]}"
        return {**row, "valid": reason is None, "reason": reason}

    return fn


def _usage_error(message: str) -> NoReturn:
    """An option combination argparse cannot check: its message format and exit status 2."""
    print(f"xfinder-ray prompt: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def cmd_prompt(args: argparse.Namespace) -> RowFn:
    if args.checkpoint in VERIFIER_CHECKPOINTS:
        return _verifier_prompt(args)
    if args.variant is not None or args.cot:
        _usage_error(f"--variant and --cot are for verifier checkpoints, not {args.checkpoint}")

    def fn(row: dict[str, Any]) -> dict[str, Any]:
        rec = _valid(row)
        rendered = render_prompt(
            rec.question,
            rec.llm_output,
            rec.answer_range,
            checkpoint=args.checkpoint,
            fmt=args.format or "training",
            max_prompt_tokens=args.max_prompt_tokens or TRAINING_MAX_LENGTH - 32,
            reasoning=args.reasoning,
        )
        return {**row, "prompt": rendered.prompt, "truncated": rendered.truncated}

    return fn


def _verifier_prompt(args: argparse.Namespace) -> RowFn:
    """An xVerify or CompassVerifier prompt as the scoring job renders it (docs/judges.md): a closed
    thought dropped unless --reasoning full, a response too long for the window cut in its middle."""
    spec = verifier_spec(args.checkpoint)
    problems = []
    if args.format is not None:
        problems.append("--format is xFinder's (use --variant)")
    if args.variant is not None and args.variant not in spec.variants:
        problems.append(
            f"--variant {args.variant} is not one of {args.checkpoint}'s: {', '.join(spec.variants)}"
        )
    if args.cot and spec.family != "compassverifier":
        problems.append("--cot is CompassVerifier's")
    if args.reasoning not in ("final", "full"):
        problems.append("--reasoning for a verifier is final (drop a closed thought) or full")
    if problems:
        _usage_error(f"--checkpoint {args.checkpoint}: " + "; ".join(problems))

    from xfinder_ray.config import VerifierConfig, complete_verifier
    from xfinder_ray.extractors.verifier import verifier_prompt_tokens
    from xfinder_ray.verifiers import fit_verifier_prompt

    # The scoring job's window unless --max-prompt-tokens is given: the job's prompt, byte for byte.
    job = VerifierConfig(checkpoint=args.checkpoint, cot=args.cot)
    complete_verifier(job, None, "--checkpoint")
    budget = args.max_prompt_tokens or verifier_prompt_tokens(job)

    def fn(row: dict[str, Any]) -> dict[str, Any]:
        rec = _valid(row)
        prompt, truncated = fit_verifier_prompt(
            args.checkpoint,
            rec.question,
            rec.llm_output,
            rec.correct_answer,
            max_prompt_tokens=budget,
            variant=args.variant,
            cot=args.cot,
            strip_thought=args.reasoning == "final",
        )
        return {**row, "prompt": prompt, "truncated": truncated}

    return fn


def cmd_extract(args: argparse.Namespace) -> RowFn:
    from xfinder_ray.extractors import get_scored_extractor

    extract = get_scored_extractor(args.extractor)

    def fn(row: dict[str, Any]) -> dict[str, Any]:
        answer, tier, reason = extract(_valid(row))
        # rules also says how sure it is; the other extractors add no confidence field. Every extractor
        # says why a [No valid answer] has none (null for an answer), as judgments/ does.
        sure = {"confidence": tier} if tier is not None else {}
        return {**row, "extracted_answer": answer, **sure, "no_answer_reason": reason}

    return fn


def cmd_judge(args: argparse.Namespace) -> RowFn:
    from xfinder_ray.judging import judge

    def fn(row: dict[str, Any]) -> dict[str, Any]:
        extracted = row.get("extracted_answer", row.get("extracted"))
        if not isinstance(extracted, str):
            raise LineError("no extracted_answer (or extracted) string to judge")
        kat, correct = row.get("key_answer_type"), row.get("correct_answer")
        if not isinstance(kat, str) or kat not in records.KEY_ANSWER_TYPES:
            raise LineError(f"invalid record: unknown key_answer_type {kat!r}")
        if correct is None:
            raise LineError("invalid record: field 'correct_answer' is null or missing")
        try:
            verdict = judge(kat, row.get("standard_answer_range"), extracted, str(correct), math=args.math)
        except records.InvalidRecord as e:
            raise LineError(f"invalid record: {e}") from None
        return {**row, "judgment": verdict}

    return fn


def _run_job(
    load: Callable[[], Any],
    run: Callable[[Any], Any],
    errors: tuple[type[Exception], ...],
    before: Callable[[Any], None] | None = None,
    after_init: Callable[[Any, bool], None] | None = None,
) -> Any:
    """Load a config, check it (`before`, ahead of Ray), start or join Ray, check the cluster
    (`after_init`), run; the result or the exit code: 2 for a ConfigError, at load or while running
    (storage.profile naming no profile, gs:// without gcsfs, a checkpoint that is not there), 1 for
    `errors` (a missing input path among them)."""
    from xfinder_ray.config import ConfigError
    from xfinder_ray.job import init_ray
    from xfinder_ray.preflight import starts_local_ray

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        cfg = load()
    except ConfigError as e:
        print(f"xfinder-ray: {e}", file=sys.stderr)
        return 2
    if not (cfg.ray.address or os.environ.get("RAY_ADDRESS")):
        # Ray's runtime-env agent logs every runtime_env, env_vars included, at INFO; the vLLM replicas get
        # xfinder.env_vars (HF_TOKEN, ...) that way. The local instance started below inherits this, so its
        # own processes log at WARNING (as docs/submit.md advises for clusters); this process imported ray
        # already and keeps INFO. A RAY_LOGGER_LEVEL set by the caller wins.
        os.environ.setdefault("RAY_LOGGER_LEVEL", "warning")
    try:
        if before is not None:
            before(cfg)  # xfinder_ray/preflight.py: input paths, the checkpoint
        local = starts_local_ray(cfg)
        init_ray(cfg)  # reads only cfg.ray
        if after_init is not None:
            after_init(cfg, local)  # before any engine is built: a GPU to run on
        return run(cfg)
    except ConfigError as e:  # storage is resolved in this process, so it is ours, not a RayTaskError
        print(f"xfinder-ray: {e}", file=sys.stderr)
        return 2
    except errors as e:
        print(f"xfinder-ray: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line, not Ray Data's traceback; the written parts are kept
        print(
            f"xfinder-ray: interrupted; the rows written so far are kept in {getattr(cfg.output, 'path', '?')}: "
            "run the same command to resume",
            file=sys.stderr,
        )
        return 130


def score_main(config: str | None, overrides: list[str]) -> int:
    """Run the scoring job (`xfinder-ray score`, `jobs/score.py`); print the leaderboard."""
    from xfinder_ray.config import load_config
    from xfinder_ray.pipeline import JOB_NOTE, BadInputFile, CountMismatch, OutputExists, run
    from xfinder_ray.preflight import check_after_ray, check_before_ray, rejection_problem
    from xfinder_ray.resume import OutputCorrupt

    errors = (OutputExists, OutputCorrupt, CountMismatch, BadInputFile, FileNotFoundError)
    cfgs: list[Any] = []
    # The job's notes (the rules fallback, folders left out of the input) are printed below as NOTE:,
    # once; the API (xr.score) has only the log lines.
    logging.getLogger("xfinder_ray").addFilter(lambda record: not getattr(record, JOB_NOTE, False))

    def load() -> Any:
        cfgs.append(load_config(config, overrides))
        return cfgs[-1]

    result = _run_job(load, run, errors, check_before_ray, check_after_ray)
    if isinstance(result, int):
        return result
    for note in result.notes:  # on stderr: `score ... > leaderboard.md` keeps only the leaderboard
        print(f"NOTE: {note}", file=sys.stderr)
    counts = result.manifest["counts"]
    print(result.leaderboard)
    print(
        f"{counts['input']} records: {counts['judged']} judged, {counts['rejected']} rejected "
        f"({result.manifest['records_per_s']} records/s) -> {result.output}"
    )
    if "import" in result.manifest:
        imp = result.manifest["import"]
        print(
            f"import ({imp['framework']}): {imp['read']} samples read, {imp['written']} written, "
            f"{imp['rejected']} rejected, {imp['skipped']} skipped"
        )
    resume, cache = result.manifest["resume"], result.manifest["cache"]
    if resume["resumed"]:
        print(
            f"resumed: {resume['rows_done_before']} rows were already done, {resume['rows_this_run']} done now"
        )
    if cache["path"]:
        print(f"extraction cache: {cache['hits']} hits, {cache['misses']} misses ({cache['path']})")
    for skipped in result.manifest["skipped_files"]:
        print(f"SKIPPED unreadable file {skipped['file']}: {skipped['error']}", file=sys.stderr)
    problem = rejection_problem(cfgs[-1], result)
    if problem:  # committed, but hardly anything was judged: a wrong format or column names, usually
        print(f"xfinder-ray: {problem}", file=sys.stderr)
        return 3
    return 0


def ablate_main(config: str | None, overrides: list[str]) -> int:
    """Run the ablation job (`xfinder-ray ablate`, docs/ablation.md); print accuracy per extractor."""
    from xfinder_ray.ablation.config import load_ablation_config
    from xfinder_ray.ablation.run import CountMismatch as AblationCountMismatch
    from xfinder_ray.ablation.run import run_ablation
    from xfinder_ray.pipeline import BadInputFile, OutputExists
    from xfinder_ray.preflight import check_inputs

    errors = (OutputExists, AblationCountMismatch, BadInputFile, FileNotFoundError)
    result = _run_job(
        lambda: load_ablation_config(config, overrides),
        run_ablation,
        errors,
        lambda cfg: check_inputs(cfg.input.paths),
    )
    if isinstance(result, int):
        return result
    print(result.summary.to_string(index=False))
    counts = result.manifest["counts"]
    print(
        f"{counts['input']} records ({counts['rejected_by_validation']} rejected by validation), "
        f"{len(result.manifest['extractors'])} extractors x {len(result.manifest['comparators'])} comparators "
        f"-> {result.output}/report.html"
    )
    return 0


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps each line of a description or epilog on its own, so the reads / writes / exit status
    lists keep their line breaks and still fit the terminal; a wrapped line continues under its
    second column (after `writes: `, an exit code, a command list)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for line in text.splitlines():
            column = re.match(r"\s*(?:\S+:|\d+|.*?\S(?=\s{2,}))\s+", line)
            hang = " " * (len(column.group(0)) if column and len(column.group(0)) < 30 else 0)
            filled = textwrap.fill(
                line, width, initial_indent=indent, subsequent_indent=indent + hang, break_on_hyphens=False
            )
            lines.append(filled if line.strip() else "")
        return "\n".join(lines)


_LINES_STATUS = """exit status:
  0    every line was processed{ok}
  1    a line was not a JSON object{record}: reported on stderr with its line number; the other lines are still written
  2    a usage error (a bad option)
  130  interrupted (Ctrl-C): the lines already written are complete
  141  stdout was closed early (`| head`)"""
_RECORDS_IN = "reads:  JSON Lines on stdin, one record a line (the fields: README.md, 'Input records')"
_BAD_RECORD = " or not a valid record (then written with an `error` field)"

# What each subcommand reads, writes and exits with (`xfinder-ray COMMAND --help`): one item a line, the
# formatter wraps them. tests/cpu/test_cli.py checks that every subcommand has the three parts.
EPILOGS = {
    "validate": f"""{_RECORDS_IN}
writes: JSON Lines on stdout: each line with `valid` (true/false) and `reason` (why not; null when valid) added; a record_id seen before is invalid, as `score` rejects it
{_LINES_STATUS.format(ok=" (an invalid record is valid=false, not an error)", record="")}""",
    "prompt": f"""{_RECORDS_IN}
writes: JSON Lines on stdout: each line with `prompt` (the text the scoring job sends the model) and `truncated` (whether the response's middle was cut to fit) added
{_LINES_STATUS.format(ok="", record=_BAD_RECORD)}""",
    "extract": f"""{_RECORDS_IN}
writes: JSON Lines on stdout: each line with `extracted_answer`, `no_answer_reason` (why there is no answer; null for an answer) and, for rules, `confidence` (certain | likely | unsure) added
{_LINES_STATUS.format(ok="", record=_BAD_RECORD)}""",
    "judge": f"""reads:  JSON Lines on stdin: `extracted_answer` (or `extracted`; e.g. from `xfinder-ray extract`), `key_answer_type`, `correct_answer`, `standard_answer_range`
writes: JSON Lines on stdout: each line with `judgment` (true/false) added
{_LINES_STATUS.format(ok="", record=" or could not be judged (then written with an `error` field)")}""",
    "score": """reads:  the config (--config YAML over the defaults in xfinder_ray/config.py; without it input= and output= are required) and the input records: input=FILE|FOLDER|[a,b] (local, file://, s3://; Parquet and JSON Lines, or a framework's output with input.format=lm-eval|opencompass|...; globs are not expanded)
writes: output=FOLDER (local or s3://): judgments/, rejects/, accuracy/ (by_model, by_model_task, ranks, ...), leaderboard.md, report.html, figures/, manifest.json (written last: the run is committed); with compare_to=OLD|previous also diff.md and diff/. stdout: the leaderboard and a summary line; stderr: notes and errors, one `xfinder-ray: ...` line each
exit status:
  0    committed
  1    an input or output problem: a missing input, a committed output (write to a new output=, or set output.overwrite=true), an unreadable file, a count mismatch
  2    a config problem: a bad key or value, an output inside an input, a checkpoint not on disk, xfinder.device=gpu without a GPU on a local Ray instance; a bad option
  3    committed, but more than input.max_rejected_share (0.5) of the records were rejected: the most common reasons are printed (wrong column names or format, usually)
  130  interrupted (Ctrl-C): the parts written are kept; run the same command to resume
keys:   README.md 'Configuration', configs/*.yaml, the schema xfinder_ray/config.py; e.g. input.columns.llm_output=response extractor.name=rules output.overwrite=true""",
    "ablate": """reads:  the config (--config configs/ablation.yaml; the input keys are the scoring job's) and the input records (input=..., as for score)
writes: output=FOLDER: records/, judgments/<extractor>__<comparator>/, rejects/, comparison/ (accuracy, agreement, ranks, Kendall tau, rank flips: .parquet and .csv), review/, figures/, report.html, manifest.json (written last). stdout: accuracy per extractor x comparator and a summary line
exit status:
  0    committed
  1    an input or output problem: a missing input, a committed output without output.overwrite=true, an unreadable file, a count mismatch
  2    a config problem: an unknown extractor or comparator, a bad key or value; a bad option
  130  interrupted (Ctrl-C): the parts written are kept; run the same command to resume""",
    "import": """reads:  PATH...: a framework's output files or folders (local, file://, s3://) and the task map (configs/task_map.yaml, then each --task-map)
writes: DIR (--output): records.parquet (job input + the framework's own verdict), _import/rejects.parquet, _import/report.json. stdout: the counts; stderr: SKIPPED / REJECTED lines
exit status:
  0    written
  1    nothing readable in PATH, a file of another format, a bad task map
  2    a bad option, or an output URL this machine cannot write (gs:// without gcsfs, ...)
  130  interrupted (Ctrl-C)""",
    "diff": """reads:  OLD and NEW: two committed score outputs (local, file://, s3://; manifest.json present)
writes: OUT/diff.md and OUT/diff/ (tables as .parquet, rank_moves.png); OUT is NEW unless --out (or --output). stdout: diff.md's text; stderr: where it was written
exit status:
  0    written
  1    OLD or NEW is not a committed output, or its storage cannot be read
  2    a bad option
  130  interrupted (Ctrl-C)""",
}

_EPILOG = """commands, by what they read:
  score, ablate    a config and input files -> an output folder (Ray Data; vLLM for model judges)
  import           lm-eval / OpenCompass / ZeroEval / Inspect / lighteval outputs -> job input
  diff             two committed score outputs -> diff.md and diff/
  record tools     validate, prompt, extract, judge: JSON Lines records on stdin -> the same lines, fields added, on stdout
Each command's --help says what it reads, what it writes and its exit status: 0 done; 1 an input, output or record problem; 2 a config or usage problem; 3 (score) committed, but most records rejected; 130 interrupted.
Quick start: `make demo`. README.md and docs/*.md in the repository say the rest."""


def _sub(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    return sub.add_parser(
        name, help=help, description=help[0].upper() + help[1:] + ".", epilog=EPILOGS[name],
        formatter_class=_HelpFormatter,
    )  # fmt: skip


def _add_prompt_parser(sub: Any) -> None:
    sp = _sub(sub, "prompt", "add the xFinder (or verifier) `prompt` (and `truncated`) to each record")
    sp.add_argument(
        "--checkpoint",
        choices=(*CHECKPOINTS, *VERIFIER_CHECKPOINTS),
        default="xFinder-qwen1505",
        metavar="NAME",
        help="an xFinder checkpoint (default: xFinder-qwen1505) or a verifier: xVerify-0.5B-I, "
        "CompassVerifier-3B, ... (docs/judges.md)",
    )
    sp.add_argument("--format", choices=FORMATS, help="xFinder's prompt format (default: training)")
    sp.add_argument(
        "--variant", choices=VERIFIER_VARIANTS, help="a verifier's prompt variant (default: tokenizer)"
    )
    sp.add_argument("--cot", action="store_true", help="CompassVerifier's chain-of-thought prompt")
    sp.add_argument(
        "--max-prompt-tokens",
        type=int,
        default=None,
        help=f"cut the response's middle to fit (default: {TRAINING_MAX_LENGTH - 32} for xFinder; "
        "a verifier's: the scoring job's verifier.max_model_len - max_tokens)",
    )
    sp.add_argument(
        "--reasoning",
        choices=REASONING,
        default="final",
        help="what of a reasoning response the prompt holds, as the job's xfinder.reasoning (docs/prompts.md); "
        "a verifier takes final (drop a closed thought) or full",
    )
    sp.set_defaults(make=cmd_prompt)


def _add_record_parsers(sub: Any) -> None:
    """validate, prompt, extract, judge: JSON Lines in, JSON Lines out."""
    from xfinder_ray.extractors import record_extractor_names
    from xfinder_ray.judging import COMPARATORS

    _sub(sub, "validate", "add `valid` and `reason` to each record").set_defaults(make=cmd_validate)
    _add_prompt_parser(sub)
    sp = _sub(sub, "extract", "add `extracted_answer` (and `confidence`, `no_answer_reason`) to each record")
    sp.add_argument(
        "--extractor",
        default="rules",
        choices=record_extractor_names(),
        metavar="NAME",
        help="a registered record-level extractor (default: rules; also lm-eval, opencompass, ...)",
    )
    sp.set_defaults(make=cmd_extract)
    sp = _sub(sub, "judge", "add `judgment` to each record (reads `extracted_answer` or `extracted`)")
    sp.add_argument(
        "--comparator",
        "--math",
        dest="math",
        default="math-verify",
        choices=COMPARATORS.names(),
        help="how an extracted answer is compared with the correct one (default: math-verify; "
        "docs/judging.md); --math is its old name",
    )
    sp.set_defaults(make=cmd_judge)


def build_parser() -> argparse.ArgumentParser:
    from xfinder_ray import __version__

    p = argparse.ArgumentParser(
        prog="xfinder-ray",
        description=" ".join(__doc__.split("\n\n")[0].split()).removeprefix("The `xfinder-ray` command: "),
        epilog=_EPILOG,
        formatter_class=_HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sp = _sub(sub, "score", "run the scoring job (Ray Data; vLLM for xFinder and verifiers) on a config")
    sp.add_argument(
        "--config",
        metavar="YAML",
        help="a config file (configs/local.yaml: this machine; configs/default.yaml: a GPU cluster); "
        "default: none, the built-in defaults",
    )
    sp.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config keys: input=... output=... compare_to=OLD|previous extractor.name=rules ...",
    )
    sp = _sub(sub, "ablate", "run several extractors x comparators over one input (docs/ablation.md)")
    sp.add_argument("--config", metavar="YAML", help="a config file (configs/ablation.yaml)")
    sp.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config keys: input=... output=... ablation.extractors=[...]",
    )
    from xfinder_ray.importers.cli import add_import_parser

    sp = add_import_parser(sub)  # `import FORMAT PATH... --output DIR` (docs/importing.md)
    sp.epilog, sp.formatter_class = EPILOGS["import"], _HelpFormatter
    from xfinder_ray.diff import add_diff_parser

    sp = add_diff_parser(sub)  # `diff OLD NEW [--out DIR]` (docs/diff.md)
    sp.epilog, sp.formatter_class = EPILOGS["diff"], _HelpFormatter
    # import's name for its output folder, so `--output DIR` works for both
    sp.add_argument("--output", "-o", dest="out", metavar="DIR", help="the same as --out")
    _add_record_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        # Python flushes stdout again at exit: point it at /dev/null so that raises nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # what the shell reports for a command ended by SIGPIPE (`cat big | head -1`)
    except KeyboardInterrupt:  # outside a job (score/ablate say more, in _run_job): one line, no traceback
        print("xfinder-ray: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "score":
        return score_main(args.config, args.overrides)
    if args.command == "ablate":
        return ablate_main(args.config, args.overrides)
    if hasattr(args, "run"):  # subcommands with their own entry point (`import`)
        return args.run(args)
    if hasattr(args, "make"):
        return run_lines(args.make(args), sys.stdin, sys.stdout, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
