import t from "tap";
import { acceptsGzip } from "../../../common/accept-encoding.js";

t.test("gzip only where the client's Accept-Encoding allows it", async (t) => {
  t.equal(acceptsGzip("gzip"), true, "Prometheus' scrape header");
  t.equal(acceptsGzip("br, GZIP;q=0.5"), true);
  t.equal(acceptsGzip(["identity", "gzip"]), true);
  t.equal(acceptsGzip("*"), true);
  t.equal(acceptsGzip(undefined), false);
  t.equal(acceptsGzip(""), false);
  t.equal(acceptsGzip("identity"), false);
  t.equal(acceptsGzip("gzip;q=0"), false);
  t.equal(acceptsGzip("gzip;q=0, *"), false, "an explicit refusal beats the wildcard");
  t.equal(acceptsGzip("gzip;q=zz"), false, "an unreadable q-value is not a yes");
  t.equal(acceptsGzip("deflate"), false);
});
