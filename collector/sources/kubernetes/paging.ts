// Pages bound each response: a 5,000-node list never arrives as one body.
export const PAGE = 500;

/** Every item of a list, read a page at a time by the API's continue token. */
export async function listAll<T>(
  page: (cont: string | undefined) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
): Promise<T[]> {
  const out: T[] = [];
  let cont: string | undefined;
  do {
    const res = await page(cont);
    out.push(...res.items);
    cont = res.metadata?._continue || undefined;
  } while (cont);
  return out;
}
