package nicsim.verbs;

/** Address vector (struct ibv_ah_attr): destination LID, service level, port; GRH fields kept but unused on this fabric. */
public final class AhAttr {
    private int dlid, sl, portNum = 1, srcPathBits;
    private boolean isGlobal;

    public AhAttr dlid(int v) { dlid = v; return this; }
    public AhAttr sl(int v) { sl = v; return this; }
    public AhAttr portNum(int v) { portNum = v; return this; }
    public AhAttr srcPathBits(int v) { srcPathBits = v; return this; }
    public AhAttr isGlobal(boolean v) { isGlobal = v; return this; }

    public int dlid() { return dlid; }
    public int sl() { return sl; }
    public int portNum() { return portNum; }
    public int srcPathBits() { return srcPathBits; }
    public boolean isGlobal() { return isGlobal; }
}
