"""The history wing: never lose the user's work — git checkpoints and undo, auto-commit, and the
saved conversations that `--continue` / `--resume` bring back."""
