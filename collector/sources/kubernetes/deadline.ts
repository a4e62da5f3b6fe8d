import {
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from "@kubernetes/client-node";

// Every API call carries a deadline: the client hands the request's signal to its fetch.
export function deadline(timeoutMs: number): ConfigurationOptions {
  const withDeadline: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(AbortSignal.timeout(timeoutMs));
      return new Observable(Promise.resolve(ctx));
    },
    post: (r: ResponseContext) => new Observable(Promise.resolve(r)),
  };
  return { middleware: [withDeadline], middlewareMergeStrategy: "append" };
}
