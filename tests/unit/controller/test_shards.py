"""Shards (docs/runtime.md, "Shards"): which shard owns what, the flags, the selector check."""

from __future__ import annotations

import argparse
import logging
from typing import Any

import pytest

from spa.controller.options import add_run_arguments
from spa.controller.shards import (
    SHARD_LABEL,
    Shard,
    ShardError,
    ShardFilter,
    check_selector,
    namespace_shard,
    shard_of,
)


def obj(namespace: str, name: str = "web", shard: str | None = None) -> dict[str, Any]:
    labels = {} if shard is None else {SHARD_LABEL: shard}
    return {"metadata": {"namespace": namespace, "name": name, "labels": labels}}


def test_the_namespace_hash_is_fnv_1a_64_whatever_the_process() -> None:
    # FNV-1a 64-bit of the UTF-8 bytes (the published test vectors), modulo the count: the
    # same in every process and language, unlike Python's salted hash().
    assert namespace_shard("", 1 << 64) == 0xCBF29CE484222325
    assert namespace_shard("a", 1 << 64) == 0xAF63DC4C8601EC8C
    assert namespace_shard("foobar", 1 << 64) == 0x85944171F73967E8
    assert namespace_shard("foobar", 4) == 0x85944171F73967E8 % 4
    assert namespace_shard("é", 1 << 64) != namespace_shard("e", 1 << 64)


def test_every_namespace_has_exactly_one_shard_of_n() -> None:
    shards = [Shard.by_namespace(4, k) for k in range(4)]
    names = [f"team-{i}" for i in range(200)]
    owners = [[s.name for s in shards if s.owns(obj(n))] for n in names]
    assert all(len(o) == 1 for o in owners)
    assert {o[0] for o in owners} == {"0-of-4", "1-of-4", "2-of-4", "3-of-4"}


def test_a_labelled_object_belongs_to_the_shard_its_label_names_only() -> None:
    a, b = Shard.by_label("a"), Shard.by_label("b", "app=web")
    assert a.selector == f"{SHARD_LABEL}=a"
    assert b.selector == "app=web"
    assert a.owns(obj("ns", shard="a"))
    assert not b.owns(obj("ns", shard="a"))
    assert not a.owns(obj("ns"))
    assert not b.owns(obj("ns"))


def test_each_shard_has_its_own_lease() -> None:
    assert Shard.by_label("a").lease_name("spa-leader") == "spa-leader-shard-a"
    assert Shard.by_namespace(4, 1).lease_name("spa-leader") == "spa-leader-shard-1-of-4"


def parse(*argv: str) -> Shard | None:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    return shard_of(
        name=args.shard_name, selector=args.shard_selector, count=args.shards, index=args.shard
    )


def test_the_flags() -> None:
    assert parse() is None
    assert parse("--shard-name", "a") == Shard.by_label("a")
    assert parse("--shard-name", "a", "--shard-selector", "team in (x, y),!legacy") == Shard(
        "a", "label", selector="team in (x, y),!legacy"
    )
    assert parse("--shards", "4", "--shard", "3") == Shard.by_namespace(4, 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shard-selector", "a=b"], "--shard-selector needs --shard-name"),
        (["--shards", "4"], "--shards N and --shard K go together"),
        (["--shard", "1"], "--shards N and --shard K go together"),
        (["--shards", "4", "--shard", "4"], "--shard 4: from 0 to 3 (--shards 4)"),
        (["--shards", "0", "--shard", "0"], "--shards 0: at least 1"),
        (["--shards", "2", "--shard", "0", "--shard-name", "a"], "two ways to shard"),
        (["--shard-name", "A_1"], "--shard-name 'A_1': lowercase letters"),
        (["--shard-name", "a", "--shard-selector", " "], "--shard-selector is empty"),
        (["--shard-name", "a", "--shard-selector", "a=b,c in x"], "'c in x' is not a label"),
    ],
)
def test_flags_that_describe_no_shard_are_refused_with_the_flag_named(
    argv: list[str], message: str
) -> None:
    with pytest.raises(ShardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(*argv)


@pytest.mark.parametrize(
    "selector",
    [
        "a",
        "!a",
        "a=b",
        "a==b",
        "a!=b",
        "a=",
        "example.com/shard=a,team notin (x,y)",
        "a in (b)",
        " a = b , c ",
    ],
)
def test_label_selectors_are_accepted(selector: str) -> None:
    check_selector(selector)


@pytest.mark.parametrize("selector", ["a=b=c", "a in b", "=b", "a,,b", "a in (b", "a b"])
def test_what_is_no_label_selector_is_refused(selector: str) -> None:
    with pytest.raises(ShardError, match="--shard-selector"):
        check_selector(selector)


def test_the_filter_refuses_another_shards_objects_said_once_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counted: list[str] = []
    keep = ShardFilter(Shard.by_label("b", "app=web"), "Schedule", refused=counted.append)
    with caplog.at_level(logging.WARNING):
        assert keep(obj("ns", "mine", shard="b"))
        assert not keep(obj("ns", "theirs", shard="a"))
        assert not keep(obj("ns", "theirs", shard="a"))  # an update: said once
        assert not keep(obj("ns", "nobody's"))
    assert counted == ["Schedule", "Schedule"]
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "Schedule ns/theirs is selected by --shard-selector app=web but labelled for shard a: "
        "left alone",
        f"Schedule ns/nobody's is selected by --shard-selector app=web but has no {SHARD_LABEL} "
        "label: left alone",
    ]


def test_in_namespace_hash_mode_nothing_is_said_of_the_others_objects(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shard = Shard.by_namespace(2, 0)
    counted: list[str] = []
    keep = ShardFilter(shard, "ScheduledPodAutoscaler", refused=counted.append)
    other = next(n for n in (f"ns-{i}" for i in range(10)) if namespace_shard(n, 2) == 1)
    with caplog.at_level(logging.WARNING):
        assert not keep(obj(other))
    assert counted == []
    assert caplog.records == []
