import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * Rewrites a zip (an unsigned APK or a dex jar) deterministically: AndroidManifest.xml first, every
 * other entry in name order, one fixed timestamp (1981-01-01 00:00 DOS time, independent of the time
 * zone), no extra fields or comments, stored entries stay stored (resources.arsc must), everything
 * else deflated at level 9. Compiled and run by release/build-android.sh (`ZipNormalize IN OUT`).
 */
public final class ZipNormalize {
    private static final LocalDateTime FIXED = LocalDateTime.of(1981, 1, 1, 0, 0, 0);

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java ZipNormalize.java IN.zip OUT.zip");
            System.exit(2);
        }
        try (ZipFile in = new ZipFile(args[0]);
                OutputStream file = new FileOutputStream(args[1]);
                ZipOutputStream out = new ZipOutputStream(file)) {
            out.setLevel(9);
            List<String> names = new ArrayList<>();
            for (Enumeration<? extends ZipEntry> e = in.entries(); e.hasMoreElements(); ) {
                ZipEntry entry = e.nextElement();
                if (!entry.isDirectory()) names.add(entry.getName());
            }
            Collections.sort(names);
            if (names.remove("AndroidManifest.xml")) names.add(0, "AndroidManifest.xml");
            for (String name : names) {
                ZipEntry source = in.getEntry(name);
                byte[] data;
                try (InputStream s = in.getInputStream(source)) {
                    data = s.readAllBytes();
                }
                ZipEntry entry = new ZipEntry(name);
                entry.setTimeLocal(FIXED);
                if (source.getMethod() == ZipEntry.STORED) {
                    CRC32 crc = new CRC32();
                    crc.update(data);
                    entry.setMethod(ZipEntry.STORED);
                    entry.setSize(data.length);
                    entry.setCompressedSize(data.length);
                    entry.setCrc(crc.getValue());
                } else {
                    entry.setMethod(ZipEntry.DEFLATED);
                }
                out.putNextEntry(entry);
                out.write(data);
                out.closeEntry();
            }
        }
    }
}
