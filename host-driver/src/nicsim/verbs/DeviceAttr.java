package nicsim.verbs;

/**
 * Device attributes (struct ibv_device_attr, the fields nicsim has, and ibv_device_attr_ex's
 * odp_caps and max_dm_size), as the adapter reports them.
 */
public record DeviceAttr(String fwVer, int vendorId, int vendorPartId, int maxQp, int maxQpWr, int maxSge, int maxCq,
                         int maxCqe, int maxMr, int maxPd, int maxQpRdAtom, int maxQpInitRdAtom, long maxMrSize,
                         int maxInlineData, OdpCaps odpCaps, long maxDmSize) {}
