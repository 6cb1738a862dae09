#!/usr/bin/env bash
# The server's scale-out benchmark on throwaway PostgreSQL and Redis: one span run scored by one
# Celery worker, then by two. Options go to bench/server/run.py (--documents N, --repeats N, --seed N).
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/env.sh
source scripts/lib/services.sh
env_install
services_start
export SECRET_KEY="bench-only-secret-key" ALLOWED_HOSTS="127.0.0.1,localhost" DEBUG=0 LOG_LEVEL=WARNING
env_run python manage.py migrate --noinput >/dev/null
env_run python bench/server/run.py "$@"
