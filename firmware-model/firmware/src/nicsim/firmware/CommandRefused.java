package nicsim.firmware;

import nicsim.abi.Cmd;

/** A command refused: its syndrome and the offending value, which the command's output carries back to the driver. */
final class CommandRefused extends RuntimeException {
    final Cmd.Syndrome syndrome;
    final long detail;

    CommandRefused(Cmd.Syndrome s, long detail) {
        super(s.text, null, false, false);
        this.syndrome = s;
        this.detail = detail;
    }
}
