"""`kubectl spa status` and `kubectl spa plan --from-cluster` through the real kubectl (which
finds the plugin `kubectl-spa` on PATH), against the real control plane, with `spa run` as the
controller (docs/status.md, docs/plan.md)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from spa.controller.exitcodes import EXIT_FORBIDDEN, EXIT_UNREACHABLE
from spa.controller.resources import CLUSTER_CALENDARS, SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2
from tests.builders import autoscaler, calendar, schedule
from tests.integration.harness import REPO, Kube
from tests.integration.kubectl import BIN, kubectl_spa, status_json
from tests.integration.processes import spa_run, wait_for
from tests.testenv.kubeconfig import write_kubeconfig

pytestmark = pytest.mark.integration


def hh_mm(moment: datetime) -> str:
    return moment.strftime("%H:%M")


def test_status_of_a_running_controller(
    cluster: Any, controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    tokyo = ZoneInfo("Asia/Tokyo")
    later = (now + timedelta(hours=3)).astimezone(tokyo).replace(second=0, microsecond=0)
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(
        schedule(
            name="now",
            namespace=namespace,
            type="Daily",
            startTime=hh_mm(now - timedelta(minutes=30)),
            endTime=hh_mm(now + timedelta(minutes=90)),
            minReplicas=6,
            maxReplicas=12,
        )
    )
    kube.create(
        schedule(
            name="tokyo",
            namespace=namespace,
            type="Daily",
            startTime=hh_mm(later),
            endTime=hh_mm(later + timedelta(hours=1)),
            timeZone="Asia/Tokyo",
            minReplicas=8,
        )
    )
    typo: dict[str, Any] = {
        "type": "Daily",
        "startTime": "08:00",
        "endTime": "09:00",
        "timeZone": "Europe/Londn",
    }
    kube.create(schedule(name="typo", namespace=namespace, **typo))
    kube.create(
        schedule(
            name="paused",
            namespace=namespace,
            **{**typo, "timeZone": "UTC"},
            suspend=True,
        )
    )
    admin = cluster.kubeconfig
    with spa_run(controller_kubeconfig, namespace, log=tmp_path / "spa-run.log") as process:
        wait_for(lambda: kube.bounds(namespace, "web") == (6, 12), within=30, what="window on")
        wait_for(
            lambda: kube.status(SCHEDULES, namespace, "typo").get("condition") == "Degraded",
            within=10,
            what="typo Degraded",
        )
        wait_for(
            lambda: any(e["reason"] == "ScheduleStarted" for e in kube.events(namespace)),
            within=10,
            what="event",
        )
        document = status_json(admin, "web", "-n", namespace)
        [web] = document["autoscalers"]
        assert web["condition"] == "Available"
        assert web["base"] == {"minReplicas": 3, "maxReplicas": 10}
        assert web["wanted"] == {"minReplicas": 6, "maxReplicas": 12, "activeSchedules": ["now"]}
        assert web["hpa"]["state"] == "InSync"
        assert (web["hpa"]["minReplicas"], web["hpa"]["maxReplicas"]) == (6, 12)
        states = {s["name"]: s["state"] for s in web["schedules"]}
        assert states == {"now": "active", "paused": "suspended", "tokyo": "upcoming"}
        starts = [t for t in web["transitions"] if t["activeSchedules"] == ["tokyo"]]
        assert starts[0]["local"] == [{"timeZone": "Asia/Tokyo", "time": later.isoformat()}]
        assert {"kind": "Schedule", "name": "typo"}.items() <= web["problems"][0].items()
        assert "unknown time zone 'Europe/Londn'" in web["problems"][0]["message"]
        assert "ScheduleStarted" in {e["reason"] for e in web["events"]}

        table = kubectl_spa("status", "-n", namespace, kubeconfig=admin)
        assert table.returncode == 0, table.stderr
        assert f"{namespace}/web   Available   HPA in sync" in table.stdout
        assert "  active: now" in table.stdout
        assert f"{later.strftime('%a %Y-%m-%d %H:%M')} JST Asia/Tokyo" in table.stdout
        assert "Schedule typo: spec.timeZone: unknown time zone 'Europe/Londn'" in table.stdout

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    # Nobody keeps the HPA right any more: an edit shows.
    kube.merge(HPA_V2, namespace, "web", {"spec": {"minReplicas": 2}})
    [web] = status_json(admin, "web", "-n", namespace)["autoscalers"]
    assert web["hpa"]["state"] == "OutOfSync"
    assert web["hpa"]["minReplicas"] == 2


def test_kubectl_flags_choose_cluster_and_namespaces(
    cluster: Any, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    admin = config["contexts"][0]
    config["contexts"].append(
        {"name": "team", "context": {**admin["context"], "namespace": namespace}}
    )
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    nowhere = tmp_path / "nowhere"  # $KUBECONFIG, which --kubeconfig overrides

    def names(*arguments: str) -> list[str]:
        document = status_json(nowhere, "--kubeconfig", str(kubeconfig), *arguments)
        return [f"{a['namespace']}/{a['name']}" for a in document["autoscalers"]]

    # The context's namespace is the default, as for kubectl.
    assert names("--context", "team") == [f"{namespace}/web"]
    assert names("--context", admin["name"]) == []  # its namespace: default
    assert names("-n", namespace) == [f"{namespace}/web"]
    assert f"{namespace}/web" in names("-A")
    plan = kubectl_spa(
        "plan", "--from-cluster", "--kubeconfig", str(kubeconfig), "--context", "team", "-o", "json"
    )
    assert plan.returncode == 0, plan.stderr
    assert [a["namespace"] for a in json.loads(plan.stdout)["autoscalers"]] == [namespace]
    # Plugin help names the plugin.
    assert kubectl_spa("--help").stdout.startswith("usage: kubectl spa")


def test_read_only_roles(
    cluster: Any, controller_kubeconfig: Path, kube: Kube, namespace: str
) -> None:
    # config/rbac (applied with the controller's RBAC) adds both kinds to the `view` role.
    kube.create(autoscaler(name="web", namespace=namespace))
    cluster.run_kubectl(
        "create",
        "rolebinding",
        "viewer",
        "--clusterrole=view",
        f"--serviceaccount={namespace}:viewer",
        "-n",
        namespace,
        check=True,
    )
    viewer = cluster.service_account_kubeconfig(namespace, "viewer")
    result = wait_for(
        lambda: (
            (r := kubectl_spa("status", "-n", namespace, kubeconfig=viewer)).returncode == 0 and r
        ),
        within=30,
        what="view role aggregated",
    )
    assert f"{namespace}/web" in result.stdout
    assert "Not shown" not in result.stdout  # view may read HPAs and events too

    nobody = cluster.service_account_kubeconfig(namespace, "nobody")
    refused = kubectl_spa("status", "-n", namespace, kubeconfig=nobody)
    assert refused.returncode == EXIT_FORBIDDEN
    assert refused.stderr.startswith(
        "error: not allowed to list scheduledpodautoscalers.autoscaling.d-kuro.github.io/v1: "
    )
    assert len(refused.stderr.splitlines()) == 1


def test_plan_from_cluster_is_the_plan_of_the_same_manifests(
    cluster: Any, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    samples = []
    for path in sorted((REPO / "config" / "samples").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                document["metadata"]["namespace"] = namespace
                samples.append(document)
    manifests = tmp_path / "samples.yaml"
    manifests.write_text(yaml.safe_dump_all(samples))
    for document in samples:
        kube.create(document)
    kube.create(
        schedule(
            name="orphan",
            namespace=namespace,
            target="gone",
            type="Daily",
            startTime="1:00",
            endTime="2:00",
        )
    )
    at = ["--at", "2026-11-23T00:00:00Z", "--days", "7", "-o", "json"]
    live = kubectl_spa(
        "plan", "--from-cluster", "-n", namespace, *at, kubeconfig=cluster.kubeconfig
    )
    offline = kubectl_spa("plan", "-f", str(manifests), *at)
    assert offline.returncode == 0, offline.stdout
    assert live.returncode == 1  # the orphan
    live_plan, offline_plan = json.loads(live.stdout), json.loads(offline.stdout)
    assert live_plan["autoscalers"] == offline_plan["autoscalers"]
    assert len(live_plan["autoscalers"][0]["transitions"]) > 10
    [error] = live_plan["errors"]
    assert (error["kind"], error["name"], error["document"]) == ("Schedule", "orphan", None)
    assert error["file"].startswith("https://127.0.0.1:")
    assert error["message"] == (
        f"ScheduledPodAutoscaler {namespace}/gone does not exist "
        "(the Schedule is Degraded until it does)"
    )


def _documented_pipeline() -> str:
    """The command of docs/plan.md that diffs the cluster against Git, as written there."""
    text = (REPO / "docs" / "plan.md").read_text(encoding="utf-8")
    (line,) = [line for line in text.splitlines() if "| spa plan --diff - -f deploy/" in line]
    assert line.endswith(_DIFF), line
    return line


_DIFF = "spa plan --diff - -f deploy/"


def _peak(namespace: str, black_friday: str) -> dict[str, Any]:
    """The Schedule `peak` of `web`: 20 pods 08:00-20:00 on the dates of the ClusterCalendar
    `black_friday` only, and never on those of the Calendar `freeze`."""
    return schedule(
        name="peak",
        namespace=namespace,
        type="Daily",
        startTime="08:00",
        endTime="20:00",
        minReplicas=20,
        calendars=[
            {"kind": "ClusterCalendar", "name": black_friday, "mode": "Only"},
            {"name": "freeze"},
        ],
    )


def test_the_documented_pipeline_finds_the_cluster_as_its_manifests(
    cluster: Any, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    """docs/plan.md's `kubectl get ... -o yaml | spa plan --diff - -f deploy/`, run by a shell
    with the real kubectl, on a cluster that holds exactly the manifests of deploy/: a Schedule
    that keeps to a Calendar and a ClusterCalendar is planned alike on both sides, so nothing
    differs and nothing is "not found" (the calendars were left out of the command before)."""
    black_friday = f"bf-{namespace}"[:63]
    manifests = [
        autoscaler(name="web", namespace=namespace),
        calendar(name="freeze", namespace=namespace, dates=["2026-11-25"]),
        calendar(name=black_friday, dates=["2026-11-27"]),
        _peak(namespace, black_friday),
        schedule(
            name="nights",
            namespace=namespace,
            type="Daily",
            startTime="22:00",
            endTime="23:00",
            minReplicas=5,
            calendars=[{"name": "freeze"}],
        ),
    ]
    deploy = tmp_path / "deploy"
    deploy.mkdir()

    def shell(pipeline: str) -> subprocess.CompletedProcess[str]:
        """`pipeline` run by a shell in tmp_path, the range fixed, with the real kubectl."""
        return subprocess.run(
            ["sh", "-c", f"{pipeline} --at 2026-11-23T00:00:00Z --days 7"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            cwd=tmp_path,
            env={
                **os.environ,
                "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                "KUBECONFIG": str(cluster.kubeconfig),
            },
        )

    (deploy / "web.yaml").write_text(yaml.safe_dump_all(manifests))
    try:
        for document in manifests:
            kube.create(document)
        pipeline = _documented_pipeline()
        assert " -A " in pipeline, pipeline
        # -A as written reads every namespace of the shared test cluster; this test's own is
        # the one whose objects deploy/ holds (cluster-scoped kinds are read either way).
        result = shell(pipeline.replace(" -A ", f" -n {namespace} "))
        assert (result.returncode, result.stderr) == (0, ""), result.stdout + result.stderr
        assert "not found" not in result.stdout
        *head, unchanged = result.stdout.strip().splitlines()
        assert unchanged == f"Unchanged: 1 ScheduledPodAutoscaler(s) ({namespace}/web)"
        assert [line for line in head if line] == [
            "Plan diff from 2026-11-23T00:00:00Z until 2026-11-30T00:00:00Z (times in UTC)",
            "--- old: -",
            "+++ new: deploy/",
        ]
        # The calendars are what makes it so: the command as it was, without them.
        before = shell(f"kubectl get spa,schedules -n {namespace} -o yaml | " + _DIFF)
        assert before.returncode == 2
        assert 'spec.calendars[0]: ClusterCalendar "' in before.stderr
        assert f"{namespace}/web: changed" in before.stdout
    finally:
        kube.delete(CLUSTER_CALENDARS, None, black_friday)


def _documents(stream: Any, found: queue.Queue[dict[str, Any]]) -> None:
    """Each JSON document `status --watch -o json` prints, as it is printed."""
    decoder = json.JSONDecoder()
    buffer = ""
    for line in stream:
        buffer += line
        while buffer.strip():
            try:
                document, end = decoder.raw_decode(buffer.lstrip())
            except json.JSONDecodeError:
                break
            found.put(document)
            buffer = buffer.lstrip()[end:]


def test_watch_prints_again_when_something_changes(
    cluster: Any, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    command = [str(BIN / "kubectl"), "spa", "status", "web", "-n", namespace, "-o", "json"]
    environment = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "KUBECONFIG": str(cluster.kubeconfig),
        # A watch that does not end on Ctrl-C is dumped (every thread's stack) by SIGABRT.
        "PYTHONFAULTHANDLER": "1",
    }
    errors = tmp_path / "stderr"
    with (
        errors.open("w") as stderr,
        subprocess.Popen(
            [*command, "--watch", "--interval", "0.3"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=environment,
            # A shell without job control (`make test &`, a CI runner) starts its background
            # commands with SIGINT ignored, and a process keeps an ignored signal across exec:
            # as for a user at a terminal, Ctrl-C must reach the watch.
            preexec_fn=_default_sigint,
        ) as process,
    ):
        found: queue.Queue[dict[str, Any]] = queue.Queue()
        reader = threading.Thread(target=_documents, args=(process.stdout, found), daemon=True)
        reader.start()
        try:
            first = found.get(timeout=30)
            assert first["autoscalers"][0]["base"] == {"minReplicas": 3, "maxReplicas": 10}
            # Unchanged objects print nothing more (the output is a pipe, not a terminal).
            time.sleep(1.5)
            assert found.empty()
            kube.merge(
                SCHEDULED_POD_AUTOSCALERS,
                namespace,
                "web",
                {"spec": {"horizontalPodAutoscalerSpec": {"maxReplicas": 11}}},
            )
            second = found.get(timeout=15)
            assert second["autoscalers"][0]["base"] == {"minReplicas": 3, "maxReplicas": 11}
            # kubectl execs the plugin in its own place, so Ctrl-C reaches `kubectl spa`
            # itself, and that is how a watch ends.
            process.send_signal(signal.SIGINT)
            try:
                assert process.wait(timeout=30) == 0
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGABRT)
                process.wait(timeout=10)
                pytest.fail(f"Ctrl-C did not end the watch:\n{errors.read_text()[-4000:]}")
        finally:
            if process.poll() is None:
                process.kill()
            reader.join(timeout=10)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_unreachable_api_server(cluster: Any, tmp_path: Path) -> None:
    _, ca = cluster.server_and_ca()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        server = f"https://127.0.0.1:{probe.getsockname()[1]}"
    kubeconfig = write_kubeconfig(tmp_path / "k", server=server, ca_cert=ca, user="u", token="t")
    result = kubectl_spa("status", kubeconfig=kubeconfig)
    assert result.returncode == EXIT_UNREACHABLE
    assert result.stderr == (
        f"error: cannot reach the API server at {server}: [Errno 111] Connection refused\n"
    )


def labelled(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    body = autoscaler(name=name, namespace=namespace)
    body["metadata"]["labels"] = labels
    return body


def test_status_of_a_label_selection(cluster: Any, kube: Kube, namespace: str) -> None:
    kube.create(labelled("web", namespace, team="checkout"))
    kube.create(labelled("api", namespace, team="checkout", tier="backend"))
    kube.create(labelled("blog", namespace, team="content"))
    # The Schedule of an SPA that is not selected is neither shown nor taken for an orphan.
    kube.create(
        schedule(
            name="night",
            namespace=namespace,
            target="blog",
            type="Daily",
            startTime="1:00",
            endTime="2:00",
        )
    )
    admin = cluster.kubeconfig

    def names(*selector: str) -> list[str]:
        document = status_json(admin, "-n", namespace, *selector)
        assert document["errors"] == []
        return [a["name"] for a in document["autoscalers"]]

    assert names("-l", "team=checkout") == ["api", "web"]
    assert names("--selector", "team=checkout,tier!=backend") == ["web"]
    assert names("-l", "team in (content)") == ["blog"]
    assert names("-l", "team=nobody") == []
    listed = kubectl_spa(
        "status", "-n", namespace, "-l", "team=checkout", "-o", "name", kubeconfig=admin
    )
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout.splitlines() == [
        "scheduledpodautoscaler.autoscaling.d-kuro.github.io/api",
        "scheduledpodautoscaler.autoscaling.d-kuro.github.io/web",
    ]
    # A selector only the API server can judge: a usage error that names the flag.
    refused = kubectl_spa("status", "-n", namespace, "-l", "team in (", kubeconfig=admin)
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        "error: -l/--selector: 'team in (' is not a valid label selector: "
    )
    assert len(refused.stderr.splitlines()) == 1


def kubectl_complete(kubeconfig: Path, *words: str) -> list[str]:
    """What kubectl's shell completion asks for `kubectl spa WORDS<TAB>`: kubectl finds the
    plugin kubectl-spa and its completion executable kubectl_complete-spa on PATH (both console
    scripts of setup.cfg) and prints cobra's answer: a candidate a line, then `:<directive>`."""
    path = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    assert shutil.which("kubectl_complete-spa", path=path), "kubectl_complete-spa is not installed"
    result = subprocess.run(
        [str(BIN / "kubectl"), "__complete", "spa", *words],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PATH": path, "KUBECONFIG": str(kubeconfig)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_kubectl_completes_the_plugin_from_the_cluster(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(autoscaler(name="api", namespace=namespace))
    admin = Path(cluster.kubeconfig)
    assert kubectl_complete(admin, "status", "-n", namespace, "") == ["api", "web", ":4"]
    assert kubectl_complete(admin, "status", "-n", namespace, "w") == ["web", ":4"]
    assert namespace in kubectl_complete(admin, "status", "-n", "")
    # Commands and the values of -o come from the parser, with no cluster involved.
    commands = kubectl_complete(admin, "")
    assert [line.split("\t")[0] for line in commands[:-1]] == [
        "plan",
        "status",
        "pause",
        "override",
        "resume",
        "run",
        "suggest",
        "backtest",
        "completion",
    ]
    # The incident commands name an SPA: from the cluster too.
    assert kubectl_complete(admin, "pause", "-n", namespace, "a") == ["api", ":4"]
    assert kubectl_complete(admin, "status", "-o", "") == [
        "table", "wide", "json", "yaml", "name", ":4"
    ]  # fmt: skip
    # A file is left to the shell (directive 0: its own file completion).
    assert kubectl_complete(admin, "plan", "-f", "") == [":0"]


# What bash-completion's `_get_comp_words_by_ref` sets, which the completion script of kubectl
# calls (kubectl's documentation asks for that package, absent here): the words, split already.
_COMP_WORDS_BY_REF = """
_get_comp_words_by_ref() {
    cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
}
"""


def test_the_printed_setup_completes_kubectl_spa_where_krew_installed_it(tmp_path: Path) -> None:
    """A Krew install links kubectl-spa alone into ~/.krew/bin; `kubectl spa completion bash`
    prints what completes `kubectl spa` (kubectl's own completion, which runs
    kubectl_complete-spa), and says how to add kubectl_complete-spa. Done as it says, a TAB
    after `kubectl spa st` in bash gives `status` (docs/operations.md, "Help and shell
    completion")."""
    krew = tmp_path / "krew" / "bin"
    krew.mkdir(parents=True)
    for executable in ("kubectl", "kubectl-spa"):
        (krew / executable).symlink_to(BIN / executable)
    env = {**os.environ, "PATH": f"{krew}{os.pathsep}/usr/bin{os.pathsep}/bin"}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=60, env=env
        )

    printed = run("kubectl", "spa", "completion", "bash")
    assert printed.returncode == 0, printed.stderr
    assert "source <(kubectl completion bash)" in printed.stdout.splitlines()
    assert "_ARGCOMPLETE" not in printed.stdout  # not argcomplete's script for `spa`
    said, *commands = printed.stderr.splitlines()
    assert "kubectl_complete-spa" in said
    assert len(commands) == 2
    assert all(line.startswith("  ") for line in commands)
    (tmp_path / "script.bash").write_text(printed.stdout)
    setup = run("sh", "-c", "\n".join(line.strip() for line in commands))
    assert setup.returncode == 0, setup.stderr
    assert os.access(krew / "kubectl_complete-spa", os.X_OK)
    # kubectl_complete-spa answers for the words after `kubectl spa`, as kubectl asks it.
    answered = run("kubectl_complete-spa", "st")
    assert answered.stdout.splitlines()[-1] == ":4"
    assert [line.split("\t")[0] for line in answered.stdout.splitlines()[:-1]] == ["status"]
    # Now with the setup: no word about kubectl_complete-spa any more.
    assert run("kubectl", "spa", "completion", "bash").stderr == ""
    # A TAB in bash: kubectl's completion function, loaded by the printed script, for the line
    # `kubectl spa st`.
    tab = run(
        "bash",
        "-c",
        f"{_COMP_WORDS_BY_REF}\nsource {tmp_path / 'script.bash'}\n"
        'COMP_WORDS=(kubectl spa st); COMP_CWORD=2; COMP_LINE="kubectl spa st"\n'
        "COMP_POINT=${#COMP_LINE}\n"
        "__start_kubectl kubectl st spa\n"
        'printf "%s\\n" "${COMPREPLY[@]}"',
    )
    assert tab.returncode == 0, tab.stderr
    assert tab.stdout.split() == ["status"]


def test_status_shows_the_calendars_a_schedule_keeps_to(
    cluster: Any, controller_kubeconfig: Path, kube: Kube, namespace: str
) -> None:
    """docs/status.md, "Permissions": the calendars the Schedules refer to are read with the
    rest; an identity that may not list ClusterCalendars is told so, not shown a wrong plan
    in silence. (`controller_kubeconfig` applies config/rbac, whose roles aggregate to `view`.)"""
    black_friday = f"bf-{namespace}"[:63]
    kube.create(calendar(name=black_friday, dates=["2026-11-27"]))
    try:
        kube.create(calendar(name="freeze", namespace=namespace, dates=["2026-11-28"]))
        kube.create(autoscaler(name="web", namespace=namespace))
        kube.create(_peak(namespace, black_friday))
        admin = kubectl_spa("status", "-n", namespace, "-o", "wide", kubeconfig=cluster.kubeconfig)
        assert admin.returncode == 0, admin.stderr
        window = f"daily 08:00-20:00, only on ClusterCalendar/{black_friday}, skipping"
        assert window in admin.stdout, admin.stdout
        assert "not found" not in admin.stdout

        # `view` bound in the namespace: Calendars yes, ClusterCalendars (cluster-scoped) no.
        cluster.run_kubectl(
            "create",
            "rolebinding",
            "calendar-viewer",
            "--clusterrole=view",
            f"--serviceaccount={namespace}:calendar-viewer",
            "-n",
            namespace,
            check=True,
        )
        viewer = cluster.service_account_kubeconfig(namespace, "calendar-viewer")
        result = wait_for(
            lambda: (
                (r := kubectl_spa("status", "-n", namespace, "-o", "wide", kubeconfig=viewer))
                and "Not shown" in r.stdout
                and r
            ),
            within=30,
            what="view role aggregated",
        )
        assert "not allowed to list clustercalendars.autoscaling.d-kuro.github.io/v1" in (
            result.stdout
        )
        assert f'ClusterCalendar "{black_friday}" not found' in result.stdout
    finally:
        kube.delete(CLUSTER_CALENDARS, None, black_friday)
