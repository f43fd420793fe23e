package dev.parley.simulator.internal;

import com.sun.net.httpserver.Headers;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Which requests the simulator takes at all, decided from their headers before any body is read (protocol
 * section 1). It serves programs, never web pages: any site can make a browser send a "simple" cross-site
 * {@code POST} ({@code text/plain}, no CORS preflight) to a loopback port, and DNS rebinding lets the site's
 * scripts reach that port under the site's own host name. So, on every route:
 * <ul>
 *   <li>a request carrying {@code Origin} (whatever its value) is {@code 403 ORIGIN_NOT_ALLOWED};</li>
 *   <li>without a token, a {@code Host} that is not a loopback name or address is {@code 403 HOST_NOT_ALLOWED};</li>
 *   <li>a {@code POST} whose {@code Content-Type} is not {@code application/json} is
 *       {@code 415 UNSUPPORTED_MEDIA_TYPE}.</li>
 * </ul>
 * Stateless; never resolves a name (only literals and {@code localhost} count as loopback).
 */
public final class Admission {
    private static final Pattern PORT = Pattern.compile(":[0-9]{1,5}");
    private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+");

    /** Why a request is refused: the status, the protocol's error code and a message for developers. */
    public record Refusal(int status, String code, String message) {
    }

    private Admission() {
    }

    /**
     * The refusal for a request no web page may make, or null if it may go on.
     *
     * @param tokenRequired whether the simulator was configured with a bearer token
     */
    public static Refusal check(Headers headers, String method, boolean tokenRequired) {
        if (headers.containsKey("Origin")) {
            return new Refusal(403, "ORIGIN_NOT_ALLOWED",
                    "the Bridge takes no requests from web pages (the request carries an Origin header)");
        }
        List<String> hosts = headers.get("Host");
        if (!tokenRequired && (hosts == null || hosts.size() != 1 || !isLoopbackHost(hosts.get(0)))) {
            return new Refusal(403, "HOST_NOT_ALLOWED", "a Bridge without a token answers only requests addressed to a"
                    + " loopback name or address (Host: localhost, 127.0.0.1 or [::1])");
        }
        if (method.equals("POST") && !isJson(headers.getFirst("Content-Type"))) {
            return new Refusal(415, "UNSUPPORTED_MEDIA_TYPE", "a POST must have the Content-Type application/json");
        }
        return null;
    }

    /**
     * True if the request carries {@code Authorization: Bearer <token>} (compared in constant time), or if no
     * token is required ({@code token} null).
     */
    public static boolean authorized(Headers headers, String token) {
        if (token == null) {
            return true;
        }
        String header = headers.getFirst("Authorization");
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        byte[] given = header == null ? new byte[0] : header.getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, given);
    }

    /** True for a {@code Host} header naming this machine's loopback, with an optional port. */
    public static boolean isLoopbackHost(String value) {
        if (value == null) {
            return false;
        }
        String host = value.strip();
        String name;
        String port;
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            if (end < 0) {
                return false;
            }
            name = host.substring(0, end + 1);
            port = host.substring(end + 1);
        } else {
            int colon = host.indexOf(':');
            name = colon < 0 ? host : host.substring(0, colon);
            port = colon < 0 ? "" : host.substring(colon);
        }
        return (port.isEmpty() || PORT.matcher(port).matches()) && isLoopbackName(name);
    }

    /**
     * True for {@code localhost}, an IPv4 literal in {@code 127.0.0.0/8} and the IPv6 loopback literal (bare or
     * in brackets). Names other than {@code localhost} are false: nothing is looked up.
     */
    public static boolean isLoopbackName(String name) {
        if (name.toLowerCase(Locale.ROOT).equals("localhost")) {
            return true;
        }
        if (IPV4.matcher(name).matches()) {
            String[] octets = name.split("\\.");
            for (String octet : octets) {
                if (Integer.parseInt(octet) > 255) {
                    return false;
                }
            }
            return Integer.parseInt(octets[0]) == 127;
        }
        String bare = name.startsWith("[") && name.endsWith("]") ? name.substring(1, name.length() - 1) : name;
        if (!bare.contains(":") || !IPV6.matcher(bare).matches()) {
            return false;
        }
        try {
            return InetAddress.getByName("[" + bare + "]").isLoopbackAddress();
        } catch (UnknownHostException notALiteral) {
            return false;
        }
    }

    /** True for {@code application/json}, with or without parameters such as {@code ; charset=utf-8}. */
    public static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String type = semicolon < 0 ? contentType : contentType.substring(0, semicolon);
        return type.strip().toLowerCase(Locale.ROOT).equals("application/json");
    }
}
