/**
 * Pool task `build-segment` (worker thread): writes one segment file from a flushed write
 * buffer and returns its {@link SegmentInfo}. The main thread's commit step publishes it;
 * this task never touches the manifest. Payload: {@link BuildSegmentTask}.
 */
import { runBuildSegment, type BuildSegmentTask, type SegmentInfo } from '../src/index/index.js';

export default function buildSegment(payload: BuildSegmentTask): SegmentInfo {
  return runBuildSegment(payload);
}
