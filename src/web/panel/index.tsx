/** The Control Panel (placeholder until its pages land). */
import { render } from 'preact';
import './panel.css';

render(<main><h1>sitesift Control Panel</h1></main>, document.getElementById('app')!);
