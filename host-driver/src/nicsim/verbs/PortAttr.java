package nicsim.verbs;

/** Port attributes (struct ibv_port_attr, the fields nicsim has). */
public record PortAttr(PortState state, int lid, Mtu activeMtu, Mtu maxMtu, byte[] gid, long maxMsgSz) {
    public PortAttr { gid = gid.clone(); }
    @Override public byte[] gid() { return gid.clone(); }
}
