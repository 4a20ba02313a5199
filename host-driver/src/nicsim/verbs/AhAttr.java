package nicsim.verbs;

/**
 * Address vector (struct ibv_ah_attr): destination LID, service level, port, and the global route
 * (is_global and grh: destination GID, flow label, SGID index, hop limit, traffic class). A send to a
 * multicast group names the group's MLID and, with is_global, its MGID: the packet carries a GRH whose
 * DGID tells each receiving adapter which group it is for. Between ports of one subnet the GRH is left out.
 */
public final class AhAttr {
    private int dlid, sl, portNum = 1, srcPathBits, flowLabel, sgidIndex, hopLimit, trafficClass;
    private boolean isGlobal;
    private byte[] dgid = new byte[16];

    public AhAttr dlid(int v) { dlid = v; return this; }
    public AhAttr sl(int v) { sl = v; return this; }
    public AhAttr portNum(int v) { portNum = v; return this; }
    public AhAttr srcPathBits(int v) { srcPathBits = v; return this; }
    public AhAttr isGlobal(boolean v) { isGlobal = v; return this; }

    /** grh.dgid: 16 bytes, network order. */
    public AhAttr dgid(byte[] v) {
        if (v == null || v.length != 16)
            throw new VerbsException(Errno.EINVAL, "AhAttr.dgid must be 16 bytes, got "
                    + (v == null ? "null" : v.length));
        dgid = v.clone();
        return this;
    }

    public AhAttr flowLabel(int v) { flowLabel = v; return this; }
    public AhAttr sgidIndex(int v) { sgidIndex = v; return this; }
    public AhAttr hopLimit(int v) { hopLimit = v; return this; }
    public AhAttr trafficClass(int v) { trafficClass = v; return this; }

    public int dlid() { return dlid; }
    public int sl() { return sl; }
    public int portNum() { return portNum; }
    public int srcPathBits() { return srcPathBits; }
    public boolean isGlobal() { return isGlobal; }
    public byte[] dgid() { return dgid.clone(); }
    public int flowLabel() { return flowLabel; }
    public int sgidIndex() { return sgidIndex; }
    public int hopLimit() { return hopLimit; }
    public int trafficClass() { return trafficClass; }
}
