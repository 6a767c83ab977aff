"""Judge settings: server(s), model, key, limits, prices — from options, the environment or a
TOML config file, in that order of precedence.

Environment: ``RAGMETER_BASE_URL`` (comma-separated for several servers), ``RAGMETER_MODEL``,
and the API key from the variable named by ``api_key_env`` (default ``OPENAI_API_KEY``; no key
means no ``Authorization`` header, which local servers accept).

Config file (``ragmeter.toml`` in the working directory, or ``--config``)::

    [judge]
    base_url = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]   # or one string
    model = "llama-3.1-8b-instruct"
    api_key_env = "OPENAI_API_KEY"
    concurrency = 32
    rpm = 600            # requests per minute (client-side limit)
    tpm = 400000         # tokens per minute
    timeout = 60         # seconds per request
    max_retries = 6
    max_reply_bytes = 4194304  # a reply larger than this (decompressed) fails (4 MiB)
    temperature = 0.0    # > 0 to draw several samples per pair (--samples)
    cache = "judgments.sqlite"
    price = [0.15, 0.60] # USD per 1M input / output tokens

    [judge.prices]       # a price table by model name
    "gpt-4o-mini" = [0.15, 0.60]

Several judges (an ensemble, ``--judge url=…,model=…`` repeated or ``--judges FILE``): a
TOML file of ``[[judges]]`` tables, or a JSON list of objects, each with ``url`` and
``model`` (and optionally ``api_key_env``); every other setting is shared::

    [[judges]]
    url = "http://gpu1:8000/v1"
    model = "qwen2.5-72b-instruct"

    [[judges]]
    url = "https://api.openai.com/v1"
    model = "gpt-4o"
    api_key_env = "OPENAI_API_KEY"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.judges.errors import JudgeConfigError

DEFAULT_CONFIG_FILE = "ragmeter.toml"
#: the largest reply body read from a judge server, in bytes after decompression (4 MiB): a
#: grade is a few bytes, a reply with log-probabilities or a reasoning text a few KB; a reply
#: past this is not a judge's answer (a misconfigured proxy, a compression bomb) and fails
DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024
#: the default cache's file name, in ragmeter's data folder (:mod:`ragmeter.core.datadir`)
DEFAULT_CACHE = "judgments.sqlite"
#: the default cache of earlier versions, in the working directory: still used where it exists
LEGACY_CACHE = "ragmeter-judgments.sqlite"


@dataclass(frozen=True)
class Price:
    """USD per one million input and output tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """cost = in·p_in/10⁶ + out·p_out/10⁶."""
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1e6

    @classmethod
    def parse(cls, text: str | Sequence[float]) -> Price:
        """``"0.15,0.60"``, ``"0.15"`` (same for both) or a two-number sequence."""
        parts: list[Any] = (
            [p for p in text.replace("/", ",").split(",") if p.strip()]
            if isinstance(text, str)
            else list(text)
        )
        try:
            values = [float(p) for p in parts]
        except (TypeError, ValueError):
            raise JudgeConfigError(
                f"price {text!r}: expected 'IN,OUT' in USD per 1M tokens, e.g. 0.15,0.60"
            ) from None
        if len(values) == 1:
            values = values * 2
        if len(values) != 2 or any(v < 0 for v in values):
            raise JudgeConfigError(
                f"price {text!r}: expected two non-negative numbers 'IN,OUT' per 1M tokens"
            )
        return cls(values[0], values[1])


@dataclass(frozen=True)
class JudgeConfig:
    """Everything the LLM client needs. ``seed`` and ``temperature`` go into every request
    (and into the cache key)."""

    base_urls: tuple[str, ...]
    model: str
    api_key: str | None = None
    concurrency: int = 16
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = 60.0
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_cap: float = 60.0
    temperature: float = 0.0
    seed: int | None = 0
    price: Price | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    #: the largest reply body read, in bytes after decompression; larger fails the request
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES

    def __post_init__(self) -> None:
        if not self.base_urls:
            raise JudgeConfigError(
                "no judge server: give --base-url URL (repeatable), set RAGMETER_BASE_URL, "
                "or base_url in the [judge] table of ragmeter.toml"
            )
        if not self.model:
            raise JudgeConfigError(
                "no judge model: give --model NAME, set RAGMETER_MODEL, or model in the "
                "[judge] table of ragmeter.toml"
            )
        for url in self.base_urls:
            if not url.startswith(("http://", "https://")):
                raise JudgeConfigError(f"base URL {url!r}: expected http://… or https://…")
        if self.concurrency < 1:
            raise JudgeConfigError(f"concurrency must be ≥ 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise JudgeConfigError(f"max retries must be ≥ 0, got {self.max_retries}")
        if self.max_reply_bytes < 1:
            raise JudgeConfigError(f"max reply bytes must be ≥ 1, got {self.max_reply_bytes}")
        if self.timeout <= 0:
            raise JudgeConfigError(f"timeout must be > 0 seconds, got {self.timeout}")
        if not 0.0 <= self.temperature <= 2.0:
            raise JudgeConfigError(f"temperature must be in 0..2, got {self.temperature}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise JudgeConfigError(f"{name} must be > 0, got {value}")

    def with_(self, **changes: Any) -> JudgeConfig:
        return replace(self, **changes)


def load_config_file(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The ``[judge]`` table of a TOML file (``{}`` when no file is given or found).

    ``path=None`` looks for ``ragmeter.toml`` in the working directory; a path given
    explicitly must exist.
    """
    explicit = path is not None
    p = Path(path) if path is not None else Path(DEFAULT_CONFIG_FILE)
    if not p.is_file():
        if explicit:
            raise JudgeConfigError(f"{p}: no such config file")
        return {}
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise JudgeConfigError(f"{p}: invalid TOML: {exc}") from None
    except RecursionError:
        raise JudgeConfigError(f"{p}: invalid TOML: nested too deeply") from None
    table = data.get("judge", {})
    if not isinstance(table, dict):
        raise JudgeConfigError(f"{p}: [judge] must be a table")
    known = {
        "base_url", "model", "api_key_env", "concurrency", "rpm", "tpm", "timeout",
        "max_retries", "cache", "price", "prices", "seed", "temperature", "max_reply_bytes",
    }  # fmt: skip
    unknown = sorted(set(table) - known)
    if unknown:
        raise JudgeConfigError(
            f"{p}: unknown key(s) in [judge]: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    return {**table, "_source": str(p)}


def _urls(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = [v.strip() for v in value]
    else:
        raise JudgeConfigError(f"{where}: base_url must be a string or a list of strings")
    return tuple(v.rstrip("/") for v in items if v)


def resolve_config(
    *,
    base_urls: Sequence[str] | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    price: str | None = None,
    seed: int | None = None,
    temperature: float | None = None,
    max_reply_bytes: int | None = None,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> JudgeConfig:
    """Merge options > environment > config file > defaults into a :class:`JudgeConfig`."""
    env = os.environ if environ is None else environ
    table = load_config_file(config_file)
    where = table.get("_source", "config")
    urls = (
        _urls(list(base_urls), "--base-url")
        if base_urls
        else _urls(env.get("RAGMETER_BASE_URL"), "RAGMETER_BASE_URL")
        or _urls(table.get("base_url"), where)
    )
    chosen_model = model or env.get("RAGMETER_MODEL") or table.get("model") or ""
    key_var = api_key_env or table.get("api_key_env") or "OPENAI_API_KEY"
    chosen_price: Price | None = None
    if price is not None:
        chosen_price = Price.parse(price)
    elif "price" in table:
        chosen_price = Price.parse(table["price"])
    else:
        prices = table.get("prices", {})
        if isinstance(prices, dict) and chosen_model in prices:
            chosen_price = Price.parse(prices[chosen_model])

    def pick(option: Any, key: str, default: Any) -> Any:
        return option if option is not None else table.get(key, default)

    return JudgeConfig(
        base_urls=urls,
        model=str(chosen_model),
        api_key=env.get(key_var) or None,
        concurrency=int(pick(concurrency, "concurrency", 16)),
        rpm=pick(rpm, "rpm", None),
        tpm=pick(tpm, "tpm", None),
        timeout=float(pick(timeout, "timeout", 60.0)),
        max_retries=int(pick(max_retries, "max_retries", 6)),
        seed=pick(seed, "seed", 0),
        temperature=_number(pick(temperature, "temperature", 0.0), "temperature", where),
        price=chosen_price,
        max_reply_bytes=_whole(
            pick(max_reply_bytes, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES),
            "max_reply_bytes",
            where,
        ),
    )


def _whole(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise JudgeConfigError(f"{where}: {name} must be a whole number, got {value!r}")
    return value


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JudgeConfigError(f"{where}: {name} must be a number, got {value!r}")
    return float(value)


# -- several judges (an ensemble) ------------------------------------------------------------


@dataclass(frozen=True)
class JudgeSpec:
    """One member of an ensemble: its server, model and (optionally) the environment
    variable of its API key; every other setting is the command's."""

    base_url: str
    model: str
    api_key_env: str | None = None


_SPEC_KEYS = {
    "url": "base_url",
    "base_url": "base_url",
    "model": "model",
    "api_key_env": "api_key_env",
}


def _spec(values: Mapping[str, Any], where: str) -> JudgeSpec:
    fields: dict[str, str] = {}
    for key, value in values.items():
        name = _SPEC_KEYS.get(str(key).strip().lower())
        if name is None:
            raise JudgeConfigError(
                f"{where}: unknown field {key!r}; expected url, model and optionally api_key_env"
            )
        if not isinstance(value, str) or not value.strip():
            raise JudgeConfigError(f"{where}: {key} must be a non-empty string")
        fields[name] = value.strip()
    for needed in ("base_url", "model"):
        if needed not in fields:
            shown = "url" if needed == "base_url" else needed
            raise JudgeConfigError(f"{where}: no {shown}= (expected url=…,model=…)")
    return JudgeSpec(fields["base_url"].rstrip("/"), fields["model"], fields.get("api_key_env"))


def parse_judge_spec(text: str) -> JudgeSpec:
    """``url=http://host:8000/v1,model=NAME[,api_key_env=VAR]`` (keys in any case)."""
    values: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise JudgeConfigError(f"--judge {text!r}: expected url=…,model=… (got {part!r})")
        values[key] = value
    return _spec(values, f"--judge {text!r}")


def read_judges_file(path: str | os.PathLike[str]) -> list[JudgeSpec]:
    """The judges of a TOML file (``[[judges]]`` tables) or a JSON file (a list of objects,
    or ``{"judges": [...]}``), each ``{url, model, api_key_env?}``. Errors name the file and
    the entry (1-based)."""
    import json

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgeConfigError(f"{p}: cannot read the judges file: {exc}") from None
    try:
        data: Any = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
        raise JudgeConfigError(f"{p}: invalid {kind}: {exc}") from None
    entries = data.get("judges") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise JudgeConfigError(
            f"{p}: expected a non-empty list of judges ([[judges]] tables, or a JSON list)"
        )
    specs = []
    for n, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise JudgeConfigError(f"{p}: judge {n}: expected a table {{url, model}}")
        specs.append(_spec(entry, f"{p}: judge {n}"))
    return specs


def configured_cache(cache: str | os.PathLike[str] | None, config_file: Any = None) -> Path:
    """The cache path: the option, else the config file's ``cache``, else
    ``judgments.sqlite`` in ragmeter's data folder — or ``ragmeter-judgments.sqlite`` in the
    working directory where an earlier version left one, so that a run resumes from it."""
    if cache is not None:
        return Path(cache)
    table = load_config_file(config_file)
    if "cache" in table:
        return Path(table["cache"])
    if Path(LEGACY_CACHE).is_file():
        return Path(LEGACY_CACHE)
    from ragmeter.core.datadir import data_path

    return data_path(DEFAULT_CACHE)


__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_MAX_REPLY_BYTES",
    "LEGACY_CACHE",
    "JudgeConfig",
    "JudgeSpec",
    "Price",
    "configured_cache",
    "load_config_file",
    "parse_judge_spec",
    "read_judges_file",
    "resolve_config",
]
