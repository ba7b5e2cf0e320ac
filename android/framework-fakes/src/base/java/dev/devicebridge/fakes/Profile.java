package dev.devicebridge.fakes;

import java.util.Locale;

/**
 * The device a test JVM pretends to be: an API level and, optionally, an OEM build. Chosen by the
 * system property {@code devicebridge.fake.profile} ("34", "31-vivo", "34-miui", ...; default
 * "34"), read once. {@code android.os.Build} reads it, so {@code Build.VERSION.SDK_INT} is not a
 * compile-time constant and adapters branch on it at run time as on a device.
 *
 * <p>Classes that first appear at some API level live in overlay source dirs
 * ({@code framework-fakes/src/apiNN/java}); release/test-android-adapters.sh puts an overlay on
 * the classpath only for profiles at or above NN, so {@code Class.forName} throws
 * ClassNotFoundException below, as on a device.
 */
public final class Profile {
    public static final String PROPERTY = "devicebridge.fake.profile";

    /** OEM builds the fakes model; {@link #AOSP} is an unmodified build. */
    public enum Oem {
        AOSP("google", "Google", "generic"),
        /** vivo / iQOO: IClipboard methods with extra parameters (scrcpy #4492, #4589, #4703). */
        VIVO("vivo", "vivo", "iQOO"),
        /** Honor: getPrimaryClip(String, String, int, int, String) (scrcpy #4822, #5073). */
        HONOR("honor", "HONOR", "HONOR"),
        /** Xiaomi MIUI / HyperOS: injection refused unless "USB debugging (Security settings)" is on. */
        MIUI("miui", "Xiaomi", "Redmi"),
        /** OPPO ColorOS: injection refused unless "Disable permission monitoring" is on. */
        COLOROS("coloros", "OPPO", "OPPO");

        public final String id;
        public final String manufacturer;
        public final String brand;

        Oem(String id, String manufacturer, String brand) {
            this.id = id;
            this.manufacturer = manufacturer;
            this.brand = brand;
        }
    }

    private static Profile current;

    public final int sdk;
    public final Oem oem;
    public final String name;

    private Profile(int sdk, Oem oem, String name) {
        this.sdk = sdk;
        this.oem = oem;
        this.name = name;
    }

    /** "NN" or "NN-oem". */
    public static Profile parse(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        int dash = v.indexOf('-');
        int sdk = Integer.parseInt(dash < 0 ? v : v.substring(0, dash));
        Oem oem = Oem.AOSP;
        if (dash >= 0) {
            String id = v.substring(dash + 1);
            oem = null;
            for (Oem o : Oem.values()) {
                if (o.id.equals(id)) oem = o;
            }
            if (oem == null) throw new IllegalArgumentException("unknown OEM in profile " + value);
        }
        if (sdk < 21 || sdk > 40) throw new IllegalArgumentException("API level out of range in profile " + value);
        return new Profile(sdk, oem, v);
    }

    public static synchronized Profile current() {
        if (current == null) current = parse(System.getProperty(PROPERTY, "34"));
        return current;
    }

    public boolean atLeast(int level) {
        return sdk >= level;
    }

    /** Whether this build refuses injection from the shell until a security setting is turned on. */
    public boolean blocksInjection() {
        return oem == Oem.MIUI || oem == Oem.COLOROS;
    }

    @Override
    public String toString() {
        return name;
    }
}
