// Three of prom-client's classes imported one by one (node-metrics.ts says why): the package's types
// describe its index only, so each file is typed here as the class the index exports.
declare module "prom-client/lib/counter.js" {
  import type { Counter } from "prom-client";
  const CounterClass: typeof Counter;
  export default CounterClass;
}
declare module "prom-client/lib/gauge.js" {
  import type { Gauge } from "prom-client";
  const GaugeClass: typeof Gauge;
  export default GaugeClass;
}
declare module "prom-client/lib/registry.js" {
  import type { Registry } from "prom-client";
  const RegistryClass: typeof Registry;
  export default RegistryClass;
}
