"""gdb command `stackframes`: the stack frames of the stopped thread, each
with its depth below the innermost frame and its size in bytes (the
difference of the stack pointers of a frame and the one that called it).

Loaded by bench/stack_depth.sh (`gdb -ex "source bench/stack_frames.py"`).
"""
import re

import gdb


class StackFrames(gdb.Command):
    """Prints depth, size and name of each frame, innermost first."""

    def __init__(self):
        super().__init__("stackframes", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        frame, rows = gdb.newest_frame(), []
        while frame is not None:
            try:
                sp = int(frame.read_register("rsp"))
            except gdb.error:
                sp = 0
            rows.append((sp, frame.name() or "?"))
            frame = frame.older()
        base = rows[0][0]
        for i, (sp, name) in enumerate(rows):
            size = rows[i + 1][0] - sp if i + 1 < len(rows) else 0
            name = re.sub(r"::h[0-9a-f]{16}$", "", name)
            print(f"{sp - base:7d} {size:6d} {name[:120]}")


StackFrames()
