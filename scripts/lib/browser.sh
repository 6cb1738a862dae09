# shellcheck shell=bash
# Debian's chromium for the browser tests (tests/web, marker `browser`), driven by pytest-playwright.
#
# Source this file, then call `browser_install_missing`. Playwright's own browser download is never
# used: the tests launch /usr/bin/chromium.

browser_install_missing() {
    [ -x /usr/bin/chromium ] && return 0
    echo "==> installing the Debian package: chromium" >&2
    if [ "$(id -u)" -ne 0 ]; then
        echo "error: /usr/bin/chromium missing and we are not root; install Debian's chromium first" >&2
        return 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
}
