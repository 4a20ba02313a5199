package nicsim.verbs;

/** A memory window (ibv_mw). Not built yet in the verbs library: {@link ProtectionDomain#allocMw} refuses with EOPNOTSUPP. */
public final class MemoryWindow extends VerbsObject {
    private MemoryWindow(ProtectionDomain pd) { super(pd); }
    @Override protected String describe() { return "MemoryWindow"; }
    @Override protected void destroy() {}
}
