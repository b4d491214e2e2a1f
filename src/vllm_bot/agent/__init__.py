"""The agent wing: the loop and the state of one task (limits, loop guard, interrupts, progress).

The loop asks the model through a client seam, checks and runs the calls through an executor seam
and reports typed events; it imports no SDK, UI or git code.
"""
