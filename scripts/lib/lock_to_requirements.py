"""Turn uv.lock into a pinned requirements list, for the pip fallback when uv cannot be installed."""

import sys
import tomllib

with open(sys.argv[1], "rb") as lock_file:
    lock = tomllib.load(lock_file)
for package in lock.get("package", []):
    if package.get("source", {}).get("virtual") or package.get("source", {}).get("editable"):
        continue
    print(f"{package['name']}=={package['version']}")
