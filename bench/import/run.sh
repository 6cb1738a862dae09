#!/usr/bin/env bash
# The import benchmark on a throwaway PostgreSQL: starts one (scripts/lib/services.sh), runs
# bench/import/run.py with its arguments, and stops it on exit. Example: bench/import/run.sh --documents 10000
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/env.sh
source scripts/lib/services.sh

services_start
env_run python bench/import/run.py "$@"
