package dev.parley.chat.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A free TCP port for a server a test starts in another process, which must be told its port up front (and
 * may have to come back on the same one after a restart). A port the kernel picked ({@code new
 * ServerSocket(0)}) lies in its ephemeral range, from which every outgoing connection of the machine takes
 * its local port: one of them may take it between the pick and the server's bind. This picks a free port
 * below that range, which outgoing connections never use.
 */
public final class FreePorts {
    /** The lowest port picked from (well above the ports of system services). */
    private static final int FLOOR = 10_000;
    private static final int ATTEMPTS = 200;

    private FreePorts() {
    }

    /** A port no socket of this machine binds now, below the ephemeral range where that range leaves room. */
    public static int outsideEphemeralRange() {
        int ceiling = ephemeralRangeStart();
        if (ceiling - FLOOR >= 1_000) {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                int port = ThreadLocalRandom.current().nextInt(FLOOR, ceiling);
                if (isFree(port)) {
                    return port;
                }
            }
        }
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /**
     * The first port of Linux's ephemeral range, or the IANA range's first (49152) elsewhere. Read line by
     * line: a file under {@code /proc} reports a size of 0, so reading it whole by its size reads nothing.
     */
    private static int ephemeralRangeStart() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        try (BufferedReader lines = Files.newBufferedReader(range)) {
            String line = lines.readLine();
            return Integer.parseInt(line.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException unknown) {
            return 49_152;
        }
    }
}
