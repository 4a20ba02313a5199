package nicsim.verbs;

/** An address handle (ibv_ah) for UD sends. */
public final class AddressHandle extends VerbsObject {
    private final AhAttr attr;

    AddressHandle(ProtectionDomain pd, AhAttr attr) {
        super(pd);
        this.attr = attr;
        made();
    }

    public AhAttr attr() { return attr; }
    @Override protected String describe() { return "AddressHandle(dlid " + attr.dlid() + ")"; }
    @Override protected void destroy() {}
}
