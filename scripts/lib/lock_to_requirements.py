"""Turn uv.lock into a pinned requirements list, for the pip fallback when uv cannot be installed."""

import sys
import tomllib

with open(sys.argv[1], "rb") as lock_file:
    lock = tomllib.load(lock_file)
for package in lock.get("package", []):
    source = package.get("source", {})
    if source.get("virtual"):
        continue
    if source.get("editable"):
        # A package of this repository (the client, clients/python), installed from its folder.
        print(f"-e ./{source['editable']}")
        continue
    print(f"{package['name']}=={package['version']}")
