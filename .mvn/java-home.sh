# shellcheck shell=sh
# Picks a JDK 25+ for RelayFarm scripts. POSIX sh: sourced by ./mvnw (sh), ./relayc and .ci/run (bash).
#
# Usage:   . .mvn/java-home.sh && relayfarm_use_jdk25 || exit 1
# Effect:  exports JAVA_HOME (a JDK with java+javac, major version >= 25) and puts $JAVA_HOME/bin first on PATH.
# Order:   $JAVA_HOME, then `java` on PATH, then /usr/lib/jvm/temurin-25*, then /usr/lib/jvm/*25*.
# Opt out: RELAYFARM_NO_JDK_SELECT=1 leaves JAVA_HOME/PATH untouched.

RELAYFARM_MIN_JAVA=25

# Prints the major version of the java binary $1 (e.g. 25, 17, 8); prints nothing if it can't tell.
relayfarm_java_major() {
  "$1" -version 2>&1 | sed -n 's/^[^"]* version "\([0-9][0-9]*\)\(\.\([0-9][0-9]*\)\)\{0,1\}.*/\1 \3/p' | head -n 1 |
    while read -r _maj _min; do
      if [ "$_maj" = 1 ]; then echo "${_min:-0}"; else echo "$_maj"; fi   # "1.8.0_x" -> 8
    done
}

# True if directory $1 is a JDK home with java+javac of major version >= RELAYFARM_MIN_JAVA.
relayfarm_is_jdk25() {
  [ -n "$1" ] && [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 1
  _rf_major="$(relayfarm_java_major "$1/bin/java")"
  [ -n "$_rf_major" ] && [ "$_rf_major" -ge "$RELAYFARM_MIN_JAVA" ]
}

relayfarm_use_jdk25() {
  [ "${RELAYFARM_NO_JDK_SELECT:-}" = 1 ] && return 0
  _rf_home=""
  if relayfarm_is_jdk25 "${JAVA_HOME:-}"; then
    _rf_home="$JAVA_HOME"
  else
    _rf_java="$(command -v java 2>/dev/null || true)"
    if [ -n "$_rf_java" ]; then
      _rf_java="$(readlink -f "$_rf_java" 2>/dev/null || echo "$_rf_java")"
      _rf_cand="$(dirname "$(dirname "$_rf_java")")"
      if relayfarm_is_jdk25 "$_rf_cand"; then _rf_home="$_rf_cand"; fi
    fi
  fi
  if [ -z "$_rf_home" ]; then
    # Callers may run with globbing off (mvnw uses `set -f`): turn it on just for this loop.
    case $- in *f*) _rf_noglob=1; set +f ;; *) _rf_noglob=0 ;; esac
    for _rf_cand in /usr/lib/jvm/temurin-25* /usr/lib/jvm/*25*; do
      if relayfarm_is_jdk25 "$_rf_cand"; then _rf_home="$_rf_cand"; break; fi
    done
    [ "$_rf_noglob" = 1 ] && set -f
  fi
  if [ -z "$_rf_home" ]; then
    {
      echo "error: RelayFarm requires JDK ${RELAYFARM_MIN_JAVA} or newer, and none was found."
      echo "  JAVA_HOME=${JAVA_HOME:-<unset>}; java on PATH: $(command -v java 2>/dev/null || echo none)"
      echo "  Looked in /usr/lib/jvm/temurin-25* and /usr/lib/jvm/*25*."
      echo "  Install a JDK 25 (e.g. Temurin 25) and set JAVA_HOME to it."
    } >&2
    return 1
  fi
  JAVA_HOME="$_rf_home"
  PATH="$JAVA_HOME/bin:$PATH"
  export JAVA_HOME PATH
  unset _rf_home _rf_java _rf_cand _rf_noglob _rf_major
  return 0
}
