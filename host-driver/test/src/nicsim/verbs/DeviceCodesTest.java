package nicsim.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import java.util.function.ToIntFunction;
import nicsim.abi.AccessBits;
import nicsim.abi.Cqe64;
import nicsim.abi.CqeTmFlags;
import nicsim.abi.DcRole;
import nicsim.abi.EqeType;
import nicsim.abi.MtuCode;
import nicsim.abi.QpModifyMask;
import nicsim.abi.QpcState;
import nicsim.abi.ServiceType;
import nicsim.abi.TmhOpcode;
import org.junit.jupiter.api.Test;

/**
 * The table between libibverbs' numbers and the device's (DeviceCodes), both ways for every value: each public
 * value reaches a device value of the same name and back, each device value a public one and back. The numbers
 * agree too: the C provider and the guest's kernel driver write libibverbs' numbers into the same mailboxes.
 */
class DeviceCodesTest {
    private static <V extends Enum<V>, D extends Enum<D>> void bothWays(Class<V> v, Class<D> d, Function<V, D> down,
            Function<D, V> up, ToIntFunction<V> vNumber, ToIntFunction<D> dNumber) {
        for (V x : v.getEnumConstants()) {
            D y = down.apply(x);
            assertNotNull(y, v.getSimpleName() + "." + x + " has no device value");
            assertEquals(x.name(), y.name(), v.getSimpleName() + "." + x);
            assertEquals(vNumber.applyAsInt(x), dNumber.applyAsInt(y), v.getSimpleName() + "." + x + "'s number");
            assertEquals(x, up.apply(y), v.getSimpleName() + "." + x + " there and back");
        }
        for (D y : d.getEnumConstants()) {
            V x = up.apply(y);
            assertNotNull(x, d.getSimpleName() + "." + y + " has no public value");
            assertEquals(y, down.apply(x), d.getSimpleName() + "." + y + " there and back");
        }
        assertNull(down.apply(null));
        assertNull(up.apply(null));
    }

    @Test
    void everyEnumValueBothWays() {
        bothWays(QpState.class, QpcState.class, DeviceCodes::device, DeviceCodes::verbs, QpState::value,
                QpcState::value);
        bothWays(QpType.class, ServiceType.class, DeviceCodes::device, DeviceCodes::verbs, QpType::value,
                ServiceType::value);
        bothWays(DcType.class, DcRole.class, DeviceCodes::device, DeviceCodes::verbs, DcType::value, DcRole::value);
        bothWays(Mtu.class, MtuCode.class, DeviceCodes::device, DeviceCodes::verbs, Mtu::value, MtuCode::value);
        bothWays(TmhOp.class, TmhOpcode.class, DeviceCodes::device, DeviceCodes::verbs, TmhOp::value,
                TmhOpcode::value);
        bothWays(EventType.class, EqeType.class, DeviceCodes::device, DeviceCodes::verbs, EventType::value,
                EqeType::value);
    }

    /** A flag class's single bits by name (its sums, such as ALL, left out). */
    private static Map<String, Integer> bits(Class<?> c, String prefix) throws IllegalAccessException {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Field f : c.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != int.class || !f.getName().startsWith(prefix))
                continue;
            int v = f.getInt(null);
            if (Integer.bitCount(v) == 1) out.put(f.getName().substring(prefix.length()), v);
        }
        return out;
    }

    private static void bitsBothWays(Class<?> v, String vPrefix, Class<?> d, IntUnaryOperator down,
            IntUnaryOperator up) throws IllegalAccessException {
        Map<String, Integer> pub = bits(v, vPrefix), dev = bits(d, "");
        assertEquals(pub.keySet(), dev.keySet(), v.getSimpleName() + " and " + d.getSimpleName() + " name other bits");
        for (var e : pub.entrySet()) {
            int x = e.getValue(), y = dev.get(e.getKey());
            assertEquals(y, down.applyAsInt(x), v.getSimpleName() + "." + e.getKey() + " down");
            assertEquals(x, up.applyAsInt(y), d.getSimpleName() + "." + e.getKey() + " up");
            assertEquals(x, y, v.getSimpleName() + "." + e.getKey() + "'s bit");
        }
    }

    @Test
    void everyFlagBitBothWaysAndAnUnknownBitPassesAsItIs() throws IllegalAccessException {
        bitsBothWays(AccessFlags.class, "", AccessBits.class, DeviceCodes::accessDown, DeviceCodes::accessUp);
        bitsBothWays(QpAttrMask.class, "", QpModifyMask.class, DeviceCodes::maskDown, DeviceCodes::maskUp);
        bitsBothWays(WcFlags.class, "TM_", CqeTmFlags.class, DeviceCodes::tmFlagsDown, DeviceCodes::tmFlagsUp);
        // the device refuses a bit it does not know: the table must not drop it on the way
        assertEquals(1 << 20 | AccessBits.REMOTE_READ, DeviceCodes.accessDown(1 << 20 | AccessFlags.REMOTE_READ));
        assertEquals(1 << 30 | QpModifyMask.QKEY, DeviceCodes.maskDown(1 << 30 | QpAttrMask.QKEY));
        assertEquals(WcFlags.TM_MATCH, DeviceCodes.tmFlagsUp(CqeTmFlags.MATCH | 1), "app_info's other bits");
    }

    @Test
    void everySyndromeIsTheStatusOfItsName() throws IllegalAccessException {
        Map<String, Integer> syndromes = new LinkedHashMap<>();
        for (Field f : Cqe64.class.getDeclaredFields())
            if (Modifier.isStatic(f.getModifiers()) && f.getName().startsWith("SYNDROME_"))
                syndromes.put(f.getName().substring("SYNDROME_".length()), f.getInt(null));
        assertEquals(16, syndromes.size(), syndromes.toString());
        syndromes.forEach((name, v) -> assertEquals(WcStatus.valueOf(name), DeviceCodes.status(v), "syndrome " + name));
        assertEquals(WcStatus.GENERAL_ERR, DeviceCodes.status(0x77), "a syndrome the table does not name");
    }
}
