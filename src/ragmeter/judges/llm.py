"""The LLM judge: a :class:`~ragmeter.judges.types.Judge` that asks an OpenAI-compatible server
through :class:`~ragmeter.judges.client.ChatClient` and parses the reply with the task's
parser."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ragmeter.judges.client import ChatClient, ClientStats
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.errors import RequestFailed
from ragmeter.judges.tasks import Task
from ragmeter.judges.types import Judgment, sample_index


class LLMJudge:
    """Judges with a chat model. Use ``async with LLMJudge(config) as judge`` and
    ``await judge.ajudge(task, inputs)``; :meth:`judge` is a synchronous one-off."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._client: ChatClient | None = None
        self.stats = ClientStats()

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def request_params(self) -> dict[str, Any]:
        """Sampling parameters that change answers: part of every cache key."""
        return {"temperature": self.config.temperature, "seed": self.config.seed}

    @property
    def concurrency(self) -> int:
        return self.config.concurrency

    async def __aenter__(self) -> LLMJudge:
        self._client = ChatClient(self.config)
        self.stats = self._client.stats
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.__aexit__(*exc)
            self._client = None

    async def ajudge(self, task: Task, inputs: Mapping[str, str]) -> Judgment:
        """One judgment; a request that fails after every retry gives status ``error``
        (a fatal server error propagates)."""
        if self._client is None:
            raise RuntimeError("use LLMJudge inside 'async with'")
        try:
            result = await self._client.chat(
                task.messages(inputs),
                max_tokens=task.max_tokens,
                top_logprobs=task.top_logprobs,
                options=task.request_options,
                seed_offset=sample_index(inputs),
            )
        except RequestFailed as exc:
            return Judgment(None, "error", model=self.model, retries=exc.retries, error=str(exc))
        value, status = task.parse(result.text, result.top_logprobs)
        return Judgment(
            value,
            status,
            raw=result.text,
            model=result.model,
            latency_s=result.latency_s,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            tokens_estimated=result.estimated,
            retries=result.retries,
        )

    def judge(self, task: Task, inputs: Mapping[str, str]) -> Judgment:
        async def once() -> Judgment:
            async with LLMJudge(self.config) as judge:
                return await judge.ajudge(task, inputs)

        return asyncio.run(once())


__all__ = ["LLMJudge"]
