/**
 * Body → constraint connectivity in CSR form (reference text, "Connectivity").
 *
 * constraintList holds every constraint index twice, once under each of its two
 * bodies, grouped by body; the constraints of body b are
 *   constraintList[ic0[b] .. ic0[b+1]),   ic0[bodyCount] = 2·constraintCount (sentinel).
 * Built sequentially on the CPU, once per topology change.
 */
export interface Connectivity {
  ic0: Int32Array;
  constraintList: Int32Array;
}

export function computeConnectivity(bodyCount: number, ib0: Int32Array, ib1: Int32Array): Connectivity {
  const constraintCount = ib0.length;
  const perBody = new Int32Array(bodyCount);
  for (let ic = 0; ic < constraintCount; ic++) {
    perBody[ib0[ic]]++;
    perBody[ib1[ic]]++;
  }
  const ic0 = new Int32Array(bodyCount + 1);
  for (let ib = 1; ib <= bodyCount; ib++) ic0[ib] = ic0[ib - 1] + perBody[ib - 1];
  perBody.fill(0);
  const constraintList = new Int32Array(2 * constraintCount);
  for (let ic = 0; ic < constraintCount; ic++) {
    constraintList[ic0[ib0[ic]] + perBody[ib0[ic]]++] = ic;
    constraintList[ic0[ib1[ic]] + perBody[ib1[ic]]++] = ic;
  }
  return { ic0, constraintList };
}
