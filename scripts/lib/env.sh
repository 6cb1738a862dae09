# shellcheck shell=bash
# Installs the locked Python environment into .venv: uv when it can be had, plain pip otherwise.
export UV_SYSTEM_CERTS=1 UV_NATIVE_TLS=1

env_install() {
    if ! command -v uv >/dev/null 2>&1; then
        echo "==> uv not found; installing it with pip" >&2
        python3 -m pip install --quiet uv >/dev/null 2>&1 || true
    fi
    if command -v uv >/dev/null 2>&1; then
        # Compiled once here: where PYTHONDONTWRITEBYTECODE is set, nothing else writes .pyc files, and
        # every command would compile Django, numpy and scipy again (seconds of CPU each;
        # bench/spans/README.md). Not in pyproject.toml: there uv would compile again on every `uv run`.
        uv sync --frozen --compile-bytecode --python 3.11 "$@" >&2 && return 0
        echo "==> uv sync failed; falling back to pip" >&2
    fi
    # Fallback: pip into .venv from the versions pinned in uv.lock. A .venv that uv made has no pip, and
    # `venv` over it fails in ensurepip: unless .venv has a pip of its own, it is made again from scratch.
    if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
        python3.11 -m venv --clear .venv
    fi
    .venv/bin/python -m pip install --quiet --upgrade pip
    python3 scripts/lib/lock_to_requirements.py uv.lock >.venv/requirements.txt
    .venv/bin/python -m pip install --quiet -r .venv/requirements.txt
}

# Runs a command inside the project environment, with or without uv.
env_run() {
    if [ -x .venv/bin/python ]; then
        PATH="$PWD/.venv/bin:$PATH" "$@"
    else
        uv run --frozen "$@"
    fi
}
