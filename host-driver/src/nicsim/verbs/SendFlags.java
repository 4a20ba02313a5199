package nicsim.verbs;

/** ibv_send_flags bits. */
public final class SendFlags {
    private SendFlags() {}

    public static final int FENCE = 1, SIGNALED = 2, SOLICITED = 4, INLINE = 8;
}
