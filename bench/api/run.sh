#!/usr/bin/env bash
# The API benchmark on throwaway PostgreSQL and Redis: gunicorn (2 workers) + one Celery worker.
# Options are passed to bench/api/run.py (--documents N, --batch-size N, --pages N, --seed N).
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/lib/env.sh
source scripts/lib/services.sh
env_install
services_start
export SECRET_KEY="bench-only-secret-key" ALLOWED_HOSTS="127.0.0.1,localhost" DEBUG=0 LOG_LEVEL=WARNING
env_run python manage.py migrate --noinput >/dev/null
env_run python bench/api/run.py "$@"
