package nicsim.firmware;

/** Packet sequence numbers: 24 bits that wrap. */
final class Psn {
    private Psn() {}

    /** {@code a - b} as a signed distance on the 24-bit circle. */
    static int diff(int a, int b) { return ((a - b) << 8) >> 8; }
}
