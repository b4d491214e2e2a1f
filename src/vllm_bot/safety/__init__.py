"""The safety wing: what may run and where — the approval policy (a pure decision), the read-only
allowlist and the shell analysis behind it, the `.git` guard, and the bubblewrap sandbox."""
