"""Job configuration: an omegaconf structured schema, YAML files, dotlist overrides, redaction.

Unknown or mistyped keys fail with a message that names the key. `input=...` and `output=...` on
the command line are shorthands for `input.paths=[...]` and `output.path=...`.
"""

from __future__ import annotations

import copy
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

log = logging.getLogger(__name__)

REDACTED = "***"
SECRET_KEYS = (
    "secret", "password", "passwd", "token", "access_key", "session_key", "api_key", "apikey", "private_key",
    "credential",
)  # fmt: skip
# user:password@ in a URL (an endpoint, a model source): the password is redacted, the rest kept.
_URL_PASSWORD = re.compile(r"(?<=://)([^/@:\s]*):[^/@\s]*@")


def _is_secret_key(name: str) -> bool:
    # `token` but not a count or a tokenizer setting (max_tokens, prompt_tokens, tokenizer_mode)
    lowered = re.sub(r"token(?=[a-z])", "", name.lower())
    return any(s in lowered for s in SECRET_KEYS)


T = TypeVar("T")


class ConfigError(ValueError):
    pass


@dataclass
class InputConfig:
    paths: list[str] = MISSING  # files or prefixes: local, file://, s3://
    format: str = "auto"  # auto | parquet | jsonl | lm-eval | opencompass (imported first: docs/importing.md)
    # lm-eval | opencompass: an extra task map (a YAML path, a mapping, or a list of them) merged over
    # configs/task_map.yaml
    task_map: Any = None
    columns: dict[str, str] = field(default_factory=dict)  # canonical name -> column name in the data
    on_bad_file: str = "fail"  # fail: stop with the file's name | skip: list it in the manifest, go on
    # A JSONL file is read as line ranges of at most this many rows (and 64 MiB), each a read task and a
    # unit of resume; a .jsonl.gz file is one (docs/performance.md, "Big JSONL files").
    jsonl_shard_rows: int = 20_000
    # More than this share of the input rejected: `score` exits 3 (the run is committed) and
    # xfinder_ray.score warns, with the top reasons (preflight.py). 1.0: never.
    max_rejected_share: float = 0.5


@dataclass
class OutputConfig:
    path: str = MISSING
    overwrite: bool = False  # replace a committed output; else a committed output is an error
    # An unfinished (uncommitted) run of the same job in `path` is continued where it stopped.
    resume: bool = True
    # A committed output to compare this run with once committed (<path>/diff.md, diff/; docs/diff.md),
    # or `previous`: the newest committed sibling of `path` named before it (dated scheduled runs).
    compare_to: str | None = None


@dataclass
class CacheConfig:
    """Content-addressed cache of model extractions, shared by every run that points at it."""

    enabled: bool = True
    path: str | None = None  # local or s3:// folder; default: <output.path>/extraction_cache


@dataclass
class ExtractorConfig:
    name: str = "xfinder"  # xfinder | rules
    # Only the embedded default sets this: where the checkpoint is not on disk, use `rules` and say so.
    fallback: str | None = None
    # strict: settle responses whose key answer is beyond doubt without the model (extractors/router.py)
    router: str = "none"


@dataclass
class XFinderConfig:
    checkpoint: str = "xFinder-qwen1505"  # selects the prompt template: xFinder-qwen1505 | xFinder-llama38it
    model_source: str = "IAAR-Shanghai/xFinder-qwen1505"  # HF id, local folder, or s3:// folder
    revision: str | None = None
    prompt_format: str = "training"  # training | xfinder-package | opencompass
    # What of a reasoning model's response (<think>...</think> etc.) the prompt holds (docs/prompts.md):
    # final: the part after the thought (an unfinished thought: its end) | tail: the end of the
    # response | full: all of it, its middle cut to fit. Part of the extractor identity.
    reasoning: str = "final"
    max_model_len: int = 2048
    max_tokens: int = 32
    batch_size: int = 64
    # Read aligned row groups of different input files together and sort their rows by question, so
    # that all models' answers to a question reach the engine together (prefix cache; docs/performance.md).
    group_by_question: bool = True
    replicas: int = 1  # fixed pool size, or ...
    min_replicas: int | None = None  # ... an autoscaling pool between these
    max_replicas: int | None = None
    gpus_per_replica: float = 1.0
    # Ray CPUs each replica reserves (its placement-group bundle); below 1 lets two pools (a second
    # opinion's) and the CPU stages share a small machine.
    cpus_per_replica: float = 1.0
    tensor_parallel_size: int = 1
    device: str = "auto"  # auto | gpu | cpu
    kv_cache_gib: int = 2  # vLLM CPU backend KV cache (VLLM_CPU_KVCACHE_SPACE)
    enforce_eager: bool | None = None  # default: eager on CPU (fast start), compiled on GPU
    engine_kwargs: dict[str, Any] = field(default_factory=dict)  # passed to vLLM verbatim
    env_vars: dict[str, str] = field(default_factory=dict, repr=False)  # may hold tokens: kept out of repr()


@dataclass
class VerifierConfig:
    """A verifier judge (`extractor.name: xverify | compassverifier`, docs/judges.md): it reads question,
    response and correct answer and writes the verdict. The replica pool and engine settings (replicas,
    device, batch_size, kv_cache_gib, engine_kwargs, env_vars...) are the `xfinder` section's."""

    checkpoint: str | None = None  # a published name; default: xVerify-0.5B-I | CompassVerifier-3B
    model_source: str | None = None  # HF id, local folder, or s3:// folder; default: the checkpoint's hub id
    revision: str | None = None
    variant: str | None = None  # the prompt variant; default: the checkpoint's (tokenizer)
    cot: bool = False  # CompassVerifier's CoT prompt (an analysis, then the boxed verdict)
    strip_thought: bool = True  # drop a closed thought before the verifier reads the response (OpenCompass)
    max_model_len: int = 4096
    max_tokens: int | None = None  # default: 16, or 2048 with cot


@dataclass
class SecondOpinionConfig(VerifierConfig):
    """A second model's verdict on the rows where the first model judge and `rules` disagree
    (docs/judges.md, "A second opinion"): a verifier checkpoint of either family; off while
    `checkpoint` is null. Pool and engine settings are the `xfinder` section's, as for `verifier`."""

    # Its verdict becomes the judgment (rules and the first model disagree: it is the majority of the
    # three); false: it is recorded beside the first judgment only.
    decides: bool = True


VERIFIER_DEFAULTS = {"xverify": "xVerify-0.5B-I", "compassverifier": "CompassVerifier-3B"}
# verifier.max_tokens unless set: a verdict is a word or a letter; the CoT prompt asks for an analysis first.
VERIFIER_MAX_TOKENS, VERIFIER_COT_MAX_TOKENS = 16, 2048


@dataclass
class JudgeConfig:
    comparator: str = "math-verify"  # a registered comparator: math-verify | xfinder-compat
    math: str | None = None  # deprecated alias of `comparator` (its old name); set, it wins, with a note


@dataclass
class StorageConfig:
    # Unset values come from the environment (AWS_ENDPOINT_URL, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, ...).
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = field(default=None, repr=False)  # credentials: kept out of repr()
    secret_access_key: str | None = field(default=None, repr=False)
    # A named AWS profile (AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE, else ~/.aws/): s3:// then goes
    # through s3fs, which reads its keys, role, SSO, region and endpoint_url (docs/deploy.md, Storage).
    profile: str | None = None


@dataclass
class AggregateConfig:
    """The accuracy tables' policy and the leaderboard's statistics (docs/leaderboard.md)."""

    # Response-caused rejects (the model's output could not be judged): wrong | exclude. Record-caused
    # rejects (the record's own fields) are always left out of accuracy, and shown.
    rejects: str = "wrong"
    seed: int = 0  # the rank-interval bootstrap's seed: the same output gives the same intervals
    bootstrap: int = 1000  # resamples of the questions for the rank intervals; 0: no intervals


@dataclass
class RayConfig:
    address: str | None = None  # None: the cluster this job was submitted to, else a local instance
    num_cpus: int | None = None  # local instance only
    # Rows per batch in the CPU stages. None: each read block whole (at most 8,192 rows), which lets Ray
    # run the read and the CPU stages in one task, so no block of responses crosses the object store;
    # with a number, Ray keeps the read a stage of its own (it may change the row count).
    batch_size: int | None = None


# Same shape as ablation/config.py:AblationJobConfig: each job declares its own sections (schema).
@dataclass
class JobConfig:
    input: InputConfig = field(default_factory=InputConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    extractor: ExtractorConfig = field(default_factory=ExtractorConfig)
    xfinder: XFinderConfig = field(default_factory=XFinderConfig)
    verifier: VerifierConfig = field(default_factory=VerifierConfig)
    second_opinion: SecondOpinionConfig = field(default_factory=SecondOpinionConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    aggregate: AggregateConfig = field(default_factory=AggregateConfig)


def _shorthand(override: str, position: int = 0) -> str:
    key, sep, value = override.partition("=")
    if not sep:
        # Not echoed: a malformed credential override (`storage.secret_access_key SECRET`) would be printed.
        raise ConfigError(f"override {position} is not key=value (its text is not shown: it may be a secret)")
    if key == "input":
        paths = value if value.startswith("[") else "[" + ",".join(repr(p) for p in value.split(",")) + "]"
        return f"input.paths={paths}"
    if key == "output":
        return f"output.path={value}"
    if key == "compare_to":
        return f"output.compare_to={value}"
    return override


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> JobConfig:
    """Load a YAML config (optional) over the schema defaults, then apply dotlist overrides."""
    cfg = load_structured(JobConfig, path, overrides)
    if cfg.judge.math is not None:  # the key's old name, still read
        log.warning("config key judge.math is deprecated: use judge.comparator (now %s)", cfg.judge.math)
        cfg.judge.comparator, cfg.judge.math = cfg.judge.math, None
    _check(cfg)
    return cfg


def load_structured(schema: type[T], path: str | Path | None = None, overrides: list[str] | None = None) -> T:
    """`schema`'s defaults, then the YAML file at `path`, then dotlist overrides, as a `schema` object;
    every failure a ConfigError naming the key (and never quoting a value under a secret key)."""
    try:
        conf = OmegaConf.structured(schema)
        if path is not None:
            p = Path(path)
            if not p.is_file():
                raise ConfigError(f"config file {str(p)!r} does not exist")
            conf = OmegaConf.merge(conf, OmegaConf.load(p))
        if overrides:
            conf = OmegaConf.merge(
                conf, OmegaConf.from_dotlist([_shorthand(o, i) for i, o in enumerate(overrides, 1)])
            )
        missing = sorted(OmegaConf.missing_keys(conf))
        if missing:
            raise ConfigError(f"missing required config value(s): {', '.join(missing)}")
        return OmegaConf.to_object(conf)  # type: ignore[return-value]
    except OmegaConfBaseException as e:
        # omegaconf's messages name the key and the expected type; drop its multi-line context.
        key = getattr(e, "full_key", None) or "?"
        detail = str(e).splitlines()[0]
        if _is_secret_key(str(key).rsplit(".", 1)[-1]) and not isinstance(e, ConfigKeyError):
            # A bad value there (a list, a mapping, a broken interpolation) is quoted by omegaconf: a credential.
            detail = f"invalid value ({type(e).__name__}; not shown: the key holds a secret)"
        raise ConfigError(f"invalid config: {detail} (key: {key})") from None


def _check(cfg: JobConfig) -> None:
    from xfinder_ray.extractors import record_extractor_names
    from xfinder_ray.importers.formats import FORMATS as IMPORT_FORMATS
    from xfinder_ray.judging import COMPARATORS
    from xfinder_ray.prompts import CHECKPOINTS, FORMATS, REASONING

    choices = {
        # The model extractor, or any registered record-level one (rules, the RegEx baselines).
        "extractor.name": (cfg.extractor.name, ("xfinder", *VERIFIER_DEFAULTS, *record_extractor_names())),
        "extractor.fallback": (cfg.extractor.fallback, (None, "rules")),
        "extractor.router": (cfg.extractor.router, ("none", "strict")),
        "xfinder.checkpoint": (cfg.xfinder.checkpoint, CHECKPOINTS),
        "xfinder.prompt_format": (cfg.xfinder.prompt_format, FORMATS),
        "xfinder.reasoning": (cfg.xfinder.reasoning, REASONING),
        "xfinder.device": (cfg.xfinder.device, ("auto", "gpu", "cpu")),
        "judge.comparator": (cfg.judge.comparator, COMPARATORS.names()),
        "input.format": (cfg.input.format, ("auto", "parquet", "jsonl", *IMPORT_FORMATS)),
        "input.on_bad_file": (cfg.input.on_bad_file, ("fail", "skip")),
        "aggregate.rejects": (cfg.aggregate.rejects, ("wrong", "exclude")),
    }
    for key, (value, allowed) in choices.items():
        if value not in allowed:
            raise ConfigError(
                f"invalid config: {key}={value!r}; expected one of "
                f"{', '.join('null' if a is None else str(a) for a in allowed)}"  # YAML's spelling of None
            )
    if not 0.0 <= cfg.input.max_rejected_share <= 1.0:
        raise ConfigError("invalid config: input.max_rejected_share must be between 0 and 1")
    if not cfg.input.paths:
        raise ConfigError("invalid config: input.paths is empty")
    if cfg.input.jsonl_shard_rows < 1:
        raise ConfigError("invalid config: input.jsonl_shard_rows must be >= 1")
    _check_columns(dict(cfg.input.columns))
    if cfg.aggregate.bootstrap < 0 or cfg.aggregate.seed < 0:
        raise ConfigError("invalid config: aggregate.bootstrap and aggregate.seed must be >= 0")
    if cfg.storage.profile is not None and (cfg.storage.access_key_id or cfg.storage.secret_access_key):
        raise ConfigError(
            "invalid config: storage.profile and storage.access_key_id/secret_access_key both set; "
            "the profile holds the keys: set one or the other"
        )
    if cfg.input.task_map is not None:
        from xfinder_ray.importers import TaskMapError, load_task_map

        try:
            load_task_map(cfg.input.task_map)
        except TaskMapError as e:
            raise ConfigError(f"invalid config: input.task_map: {e}") from None
    if cfg.extractor.name in VERIFIER_DEFAULTS:
        _check_verifier(cfg)
    if cfg.second_opinion.checkpoint is not None:
        if cfg.extractor.name not in ("xfinder", *VERIFIER_DEFAULTS):
            raise ConfigError(
                "invalid config: second_opinion.checkpoint is set, but extractor.name="
                f"{cfg.extractor.name!r} is no model judge: a second opinion is asked where a model "
                "(xfinder, xverify, compassverifier) and rules disagree"
            )
        complete_verifier(cfg.second_opinion, None, "second_opinion")
    x = cfg.xfinder
    if (x.min_replicas is None) != (x.max_replicas is None):
        raise ConfigError(
            "invalid config: set both xfinder.min_replicas and xfinder.max_replicas, or neither"
        )
    if x.min_replicas is not None and not 1 <= x.min_replicas <= x.max_replicas:
        raise ConfigError("invalid config: need 1 <= xfinder.min_replicas <= xfinder.max_replicas")
    for key in ("replicas", "max_tokens", "max_model_len", "batch_size", "tensor_parallel_size"):
        if getattr(x, key) < 1:
            raise ConfigError(f"invalid config: xfinder.{key} must be >= 1")
    if not x.cpus_per_replica > 0:
        raise ConfigError("invalid config: xfinder.cpus_per_replica must be > 0")


def _check_verifier(cfg: JobConfig) -> None:
    complete_verifier(cfg.verifier, cfg.extractor.name, "verifier", "extractor.name")


def complete_verifier(v: VerifierConfig, family: str | None, key: str, family_key: str = "") -> None:
    """Fill a verifier section's defaults (for `family`, or the checkpoint's when None), and check it;
    `key` names the section in errors (verifier, ablation.verifier.<label>)."""
    from xfinder_ray.verifiers import CHECKPOINTS, verifier_spec

    v.checkpoint = v.checkpoint or VERIFIER_DEFAULTS[family or "xverify"]
    if v.checkpoint not in CHECKPOINTS:
        raise ConfigError(
            f"invalid config: {key}.checkpoint={v.checkpoint!r}; expected one of {', '.join(CHECKPOINTS)}"
        )
    spec = verifier_spec(v.checkpoint)
    if family is not None and spec.family != family:
        raise ConfigError(
            f"invalid config: {key}.checkpoint={v.checkpoint!r} is a {spec.family} checkpoint, "
            f"not {family} ({family_key})"
        )
    v.variant = v.variant or spec.default_variant
    if v.variant not in spec.variants:
        raise ConfigError(
            f"invalid config: {key}.variant={v.variant!r}; expected one of {', '.join(spec.variants)}"
        )
    if v.cot and spec.family != "compassverifier":
        raise ConfigError(f"invalid config: {key}.cot=true needs a CompassVerifier checkpoint")
    v.model_source = v.model_source or spec.hub_id
    v.max_tokens = v.max_tokens or (VERIFIER_COT_MAX_TOKENS if v.cot else VERIFIER_MAX_TOKENS)
    if v.max_model_len <= v.max_tokens:
        raise ConfigError(f"invalid config: {key}.max_model_len must be larger than {key}.max_tokens")


def redacted(cfg: JobConfig) -> dict[str, Any]:
    """The config as a plain dict with every secret-looking value replaced."""
    data = OmegaConf.to_container(OmegaConf.structured(cfg), resolve=True)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: (REDACTED if v is not None and _is_secret_key(str(k)) else walk(v))
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str):
            return _URL_PASSWORD.sub(rf"\1:{REDACTED}@", node)
        return node

    return walk(copy.deepcopy(data))


def to_yaml(cfg: JobConfig | DictConfig) -> str:
    return OmegaConf.to_yaml(OmegaConf.structured(cfg) if not isinstance(cfg, DictConfig) else cfg)


def _check_columns(columns: dict[str, Any]) -> None:
    """input.columns maps the job's field names to the data's column names; the reverse, a natural
    guess, would be accepted silently and reject every record, so a key that is no field is refused."""
    from xfinder_ray.records import FIELDS

    for key, value in columns.items():
        if key not in FIELDS:
            hint = f"input.columns.{value}={key}" if value in FIELDS else f"input.columns.<field>={key}"
            raise ConfigError(
                f"invalid config: input.columns.{key}: the keys are the job's field names "
                f"({', '.join(FIELDS)}) and the values your columns; did you mean {hint}?"
            )
        if not isinstance(value, str) or not value:
            raise ConfigError(f"invalid config: input.columns.{key} must name a column, got {value!r}")
