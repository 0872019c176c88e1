"""Cross-checks of the manifests that a schema cannot express (run by scripts/validate-k8s.sh
after the schema validation): the shard count in the Indexed Job's command equals its
completions and parallelism, and both Jobs read the same ConfigMap and shared volume."""

import sys

import yaml


def load(path):
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    if len(docs) != 1:
        sys.exit(f"{path}: expected one resource, found {len(docs)}")
    return docs[0]


def pod(job):
    return job["spec"]["template"]["spec"]


def env(container, name):
    for e in container.get("env", []):
        if e["name"] == name:
            return e.get("value")
    return None


def main(root):
    errors = []
    shards = load(f"{root}/shards/job.yaml")
    merge = load(f"{root}/merge/job.yaml")
    cm = load(f"{root}/shards/configmap.yaml")
    pvc = load(f"{root}/shards/pvc.yaml")
    spec = shards["spec"]
    c = pod(shards)["containers"][0]
    n = env(c, "SHARDS")
    if spec.get("completionMode") != "Indexed":
        errors.append("shards/job.yaml: completionMode must be Indexed")
    if n is None or not (str(spec["completions"]) == str(spec["parallelism"]) == n):
        errors.append(
            f"shards/job.yaml: SHARDS={n} must equal completions={spec['completions']} "
            f"and parallelism={spec['parallelism']}"
        )
    cmd = " ".join(c["args"])
    for needle in ['--shard "$K/$SHARDS"', "--start-at", "JOB_COMPLETION_INDEX + 1"]:
        if needle not in cmd:
            errors.append(f"shards/job.yaml: the command lacks {needle}")
    for name, job in [("shards/job.yaml", shards), ("merge/job.yaml", merge)]:
        p = pod(job)
        claims = [v["persistentVolumeClaim"]["claimName"] for v in p["volumes"]]
        if claims != [pvc["metadata"]["name"]]:
            errors.append(f"{name}: mounts {claims}, not the claim {pvc['metadata']['name']}")
        refs = [e["configMapRef"]["name"] for e in p["containers"][0].get("envFrom", [])]
        if refs != [cm["metadata"]["name"]]:
            errors.append(f"{name}: reads {refs}, not the ConfigMap {cm['metadata']['name']}")
    if "shard-*.json" not in " ".join(pod(merge)["containers"][0]["args"]):
        errors.append("merge/job.yaml: does not merge the shards' files")
    for key in ["RUN_ID", "TARGET", "PROFILE", "BENCH_ARGS"]:
        if key not in cm["data"]:
            errors.append(f"shards/configmap.yaml: no {key}")
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"deploy/k8s: {n} shards, Jobs, ConfigMap and volume agree")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "deploy/k8s")
