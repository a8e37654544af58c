"""Checks packaging/k8s/pod-sidecar.yaml: hardening on every container, the
shared socket volume, and a sidecar config that verifetchd itself accepts.
Usage: check_k8s.py POD_YAML. Exit 77 (skip) without PyYAML."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("PyYAML not installed: skipping")
    sys.exit(77)

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {d["kind"]: d for d in docs}
    check(set(by_kind) == {"ConfigMap", "Secret", "Pod"}, "documents: ConfigMap, Secret, Pod")
    pod = by_kind["Pod"]["spec"]
    psc = pod.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True, "pod runAsNonRoot")
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "pod seccompProfile RuntimeDefault")
    check(pod.get("automountServiceAccountToken") is False, "no service account token")
    check(not any(pod.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")), "no host namespaces")

    sidecars = [c for c in pod.get("initContainers", []) if c.get("restartPolicy") == "Always"]
    check(len(sidecars) == 1 and sidecars[0]["name"] == "verifetch", "verifetch is the one native sidecar")
    agents = pod.get("containers", [])
    check(len(agents) == 1, "one agent container")
    if failures:
        return 1
    sidecar, agent = sidecars[0], agents[0]

    for c in (sidecar, agent):
        sc = c.get("securityContext", {})
        name = c["name"]
        check(sc.get("readOnlyRootFilesystem") is True, f"{name}: readOnlyRootFilesystem")
        check(sc.get("allowPrivilegeEscalation") is False, f"{name}: allowPrivilegeEscalation false")
        check(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{name}: drops ALL capabilities")
        check(isinstance(sc.get("runAsUser"), int) and sc["runAsUser"] > 0, f"{name}: non-zero runAsUser")
        limits = c.get("resources", {}).get("limits", {})
        check({"cpu", "memory"} <= set(limits), f"{name}: cpu and memory limits")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    side_mounts = {m["name"]: m["mountPath"] for m in sidecar.get("volumeMounts", [])}
    agent_mounts = {m["name"]: m["mountPath"] for m in agent.get("volumeMounts", [])}
    shared = set(side_mounts) & set(agent_mounts)
    check(len(shared) == 1, "exactly one volume shared between agent and sidecar")
    if failures:
        return 1
    vol = shared.pop()
    check("emptyDir" in volumes.get(vol, {}), f"shared volume {vol} is an emptyDir")
    check(side_mounts[vol] == agent_mounts[vol], "both mount the socket volume at the same path")

    config = by_kind["ConfigMap"]["data"]["verifetch.conf"]
    sock = re.search(r'socket\s*=\s*"([^"]+)"', config)
    check(sock is not None, "config names listen.socket")
    sock_path = sock.group(1) if sock else ""
    env = {e["name"]: e for e in agent.get("env", [])}
    check(env.get("VERIFETCH_SOCKET", {}).get("value") == sock_path, "agent VERIFETCH_SOCKET == listen.socket")
    check(os.path.dirname(sock_path) == side_mounts[vol], "socket lives on the shared volume")
    uids = re.search(r"uids\s*=\s*\[([^\]]*)\]", config)
    tenant_uids = {int(u) for u in uids.group(1).split(",") if u.strip()} if uids else set()
    check(agent["securityContext"]["runAsUser"] in tenant_uids, "agent uid is mapped to a tenant")
    side_env = {e["name"] for e in sidecar.get("env", [])}
    for key_env in re.findall(r'key_env\s*=\s*"([^"]+)"', config):
        check(key_env in side_env, f"sidecar provides key_env {key_env}")
    check("key_file" not in config, "no key_file (Secret volumes are group-readable under fsGroup)")
    check(sidecar.get("args", [])[:1] == ["--config"] and
          sidecar["args"][1].startswith(next(m["mountPath"] for m in sidecar["volumeMounts"]
                                             if m["name"] == "verifetch-config")),
          "sidecar --config points into the mounted ConfigMap")

    # The ConfigMap must be a config verifetchd accepts.
    daemon = os.path.join(os.environ.get("VERIFETCH_BUILD_ROOT", ""), "broker", "verifetchd")
    if os.access(daemon, os.X_OK):
        with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
            f.write(config)
        try:
            secret_env = {k: "k8s-manifest-test-key" for k in side_env}
            run = subprocess.run([daemon, "--check-config", f.name], capture_output=True, text=True,
                                 timeout=20, env=dict(os.environ, **secret_env))
        finally:
            os.unlink(f.name)
        check(run.returncode == 0, "verifetchd --check-config accepts the ConfigMap"
              + ("" if run.returncode == 0 else f": {run.stderr.strip()}"))
    else:
        check(False, f"verifetchd not built at {daemon}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
