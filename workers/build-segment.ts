/**
 * Pool task `build-segment` (worker thread): writes one segment file from a flushed write
 * buffer and returns its {@link SealedSegment} (its info and its rows' liveness columns). The main thread's commit step publishes it;
 * this task never touches the manifest. Payload: {@link BuildSegmentTask}.
 */
import { runBuildSegment, type BuildSegmentTask, type SealedSegment } from '../src/index/index.js';

export default function buildSegment(payload: BuildSegmentTask): SealedSegment {
  return runBuildSegment(payload);
}
